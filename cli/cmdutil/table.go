package cmdutil

import (
	"bytes"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// noneLine is what table output prints for an empty list, so that "no
// rows" and "the command printed nothing" look different.
const noneLine = "(none)"

// tableTime is the one format of timestamps in tables: UTC to the second,
// always 20 characters, so that time columns line up.
const tableTime = "2006-01-02T15:04:05Z"

// columnTitles are the headers of the columns the CLI's tables show, by
// key. Keys not here get their words' title (HeaderName); the map is for keys whose
// words alone would read wrongly (Azure's v_cp_us) or that a table names
// more plainly.
var columnTitles = map[string]string{
	"v_cp_us":                     "vCPUs",
	"memory_gb":                   "Memory GB",
	"gpus":                        "GPUs",
	"gpu_model":                   "GPU Model",
	"price_per_hour":              "USD/Hour",
	"low_priority_price_per_hour": "Low-Priority USD/Hour",
	"low_priority_capable":        "Low-Priority Capable",
	"usd":                         "USD",
	"dedicated_usd":               "Dedicated USD",
	"low_priority_usd":            "Low-Priority USD",
	"node_hours":                  "Node Hours",
	"id":                          "ID",
	"node_id":                     "Node ID",
	"principal_id":                "Principal ID",
	"client_id":                   "Client ID",
	"private_ip_address":          "Private IP Address",
	"ssh_port":                    "SSH Port",
	"current_value":               "Used",
	"os_type":                     "OS Type",
	"storage_quota_bytes":         "Storage Quota Bytes",
	"storage_used_bytes":          "Storage Used Bytes",
}

// acronyms are words that headers write in capitals (or Azure's casing)
// rather than with a capital initial.
var acronyms = map[string]string{
	"id": "ID", "ids": "IDs", "ip": "IP", "gb": "GB", "mb": "MB", "usd": "USD",
	"ssh": "SSH", "gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "cpus": "CPUs",
	"os": "OS", "url": "URL", "uri": "URI", "vm": "VM", "api": "API", "sso": "SSO",
	"tls": "TLS", "mlflow": "MLflow", "oidc": "OIDC",
}

// HeaderName returns the column header of a key: its title in
// columnTitles, else its words with capital initials ("provisioning_state"
// is "Provisioning State"), acronyms in capitals ("source_ip" is "Source
// IP"). Keys that are not snake_case (a query's "Name", Column1) are kept
// as written but for their first letter.
func HeaderName(key string) string {
	if t, ok := columnTitles[key]; ok {
		return t
	}
	words := strings.FieldsFunc(key, func(r rune) bool { return r == '_' })
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
			continue
		}
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

// tableLayout is a table's headers and the width and alignment of each
// column.
type tableLayout struct {
	headers []string
	widths  []int
	// right marks numeric columns, which are right-aligned so that
	// digits (and fixed decimals) line up.
	right []bool
}

// newTableLayout sizes the columns of keys to their headers and rows.
func newTableLayout(keys []string, rows [][]string) *tableLayout {
	t := &tableLayout{headers: make([]string, len(keys)), widths: make([]int, len(keys)), right: make([]bool, len(keys))}
	for i, k := range keys {
		t.headers[i] = HeaderName(k)
		t.widths[i] = utf8.RuneCountInString(t.headers[i])
		numeric, cells := true, 0
		for _, row := range rows {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(row[i]))
			if row[i] != "" {
				cells++
				numeric = numeric && numberCell.MatchString(row[i])
			}
		}
		t.right[i] = numeric && cells > 0
	}
	return t
}

// numberCell matches cells that are plain decimal numbers.
var numberCell = core.LazyRegexp(`^-?[0-9]+(\.[0-9]+)?$`)

// writeHeader writes the header line and the line of dashes under it.
func (t *tableLayout) writeHeader(b *bytes.Buffer) {
	dashes := make([]string, len(t.headers))
	for i := range t.headers {
		dashes[i] = strings.Repeat("-", t.widths[i])
	}
	t.writeRow(b, t.headers)
	t.writeRow(b, dashes)
}

// writeRow writes one table line, padding each cell to its column width
// on the side of its alignment; a cell wider than its column widens it
// for the lines after. Trailing blanks are dropped.
func (t *tableLayout) writeRow(b *bytes.Buffer, cells []string) {
	var line strings.Builder
	for i, c := range cells {
		if i > 0 {
			line.WriteString("  ")
		}
		n := utf8.RuneCountInString(c)
		t.widths[i] = max(t.widths[i], n)
		pad := strings.Repeat(" ", t.widths[i]-n)
		if t.right[i] {
			line.WriteString(pad + c)
		} else {
			line.WriteString(c + pad)
		}
	}
	b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
}

// writeTable writes v as an az-style table: a header row, a row of dashes
// and one row per item, columns separated by two spaces. An empty list is
// the line "(none)".
func writeTable(b *bytes.Buffer, v any, columns []string) {
	if isScalar(v) {
		b.WriteString(EscapeControls(formatScalar(v), false) + "\n")
		return
	}
	if items, ok := v.([]any); ok && len(items) == 0 {
		b.WriteString(noneLine + "\n")
		return
	}
	keys, records := cellRecords(v, true)
	keys = pickColumns(keys, columns)
	rows := rowsOf(records, keys)
	if len(keys) == 0 {
		return
	}
	tableTimes(rows)
	t := newTableLayout(keys, rows)
	t.writeHeader(b)
	for _, row := range rows {
		t.writeRow(b, row)
	}
}

// tableTimes rewrites the timestamps among cells in tableTime's format.
func tableTimes(rows [][]string) {
	for _, row := range rows {
		for i, c := range row {
			row[i] = tableTimeCell(c)
		}
	}
}

// tableTimeCell returns c in tableTime's format if it is an RFC 3339
// timestamp (the API's, with any number of fraction digits and any
// offset), else c as it is.
func tableTimeCell(c string) string {
	if len(c) < len(tableTime) || c[4] != '-' || c[10] != 'T' {
		return c
	}
	t, err := time.Parse(time.RFC3339Nano, c)
	if err != nil {
		return c
	}
	return t.UTC().Format(tableTime)
}

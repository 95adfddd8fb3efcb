package cmdutil

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/jmespath/go-jmespath"
	"gopkg.in/yaml.v3"

	"github.com/shoal-ml/shoal/domain/format"
)

// OutputFormats are the output formats accepted by --output/-o.
var OutputFormats = []string{"json", "jsonc", "yaml", "yamlc", "table", "tsv", "csv", "none"}

// object is a decoded JSON object that remembers the order of its members.
type object []member

// member is one key/value pair of an object.
type member struct {
	key   string
	value any
}

// Render writes data in the given format after applying the JMESPath query
// (if not empty).
//
// data is any Go value; it is first marshalled with encoding/json and decoded
// back into generic values, so JSON tags decide the keys. Without a query the
// keys keep the order of the original Go struct; with a query the keys of the
// result are sorted alphabetically, as the Azure CLI does. columns, if
// non-empty, is the preferred column order for table (and tsv) output of
// objects.
//
// Like the Azure CLI, Render prints nothing when the (queried) result is null.
func Render(w io.Writer, data any, format, query string, columns []string) error {
	if !slices.Contains(OutputFormats, format) {
		return fmt.Errorf("--output: unknown format %q; use one of %s", format, strings.Join(OutputFormats, ", "))
	}
	v, err := prepare(data, query)
	if err != nil {
		return err
	}
	if v == nil && format == "table" && query == "" && isNilList(data) {
		// A list the server sent as null is as empty as [] to a reader.
		v = []any{}
	}
	if v == nil || format == "none" {
		return nil
	}
	var buf bytes.Buffer
	switch format {
	case "json", "jsonc":
		writeJSON(&buf, v, "")
		buf.WriteByte('\n')
	case "yaml", "yamlc":
		if err := writeYAML(&buf, v); err != nil {
			return err
		}
	case "table":
		writeTable(&buf, v, columns)
	case "tsv":
		writeTSV(&buf, v, columns)
	case "csv":
		if err := writeCSV(&buf, v, columns); err != nil {
			return err
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// isNilList reports whether data is a nil slice: an empty list that
// encodes as null.
func isNilList(data any) bool {
	r := reflect.ValueOf(data)
	return r.Kind() == reflect.Slice && r.IsNil()
}

// prepare converts data into ordered generic values, applying query if set.
func prepare(data any, query string) (any, error) {
	var expr *jmespath.JMESPath
	if query != "" {
		var err error
		if expr, err = jmespath.Compile(query); err != nil {
			return nil, fmt.Errorf("--query: invalid JMESPath expression: %w", err)
		}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("output: encoding result: %w", err)
	}
	if expr == nil {
		return decodeOrdered(raw)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, fmt.Errorf("output: decoding result: %w", err)
	}
	result, err := expr.Search(generic)
	if err != nil {
		return nil, fmt.Errorf("--query: %w", err)
	}
	// encoding/json writes map keys sorted, which gives the alphabetical
	// key order the Azure CLI uses for query results.
	if raw, err = json.Marshal(result); err != nil {
		return nil, fmt.Errorf("--query: encoding result: %w", err)
	}
	return decodeOrdered(raw)
}

// decodeOrdered decodes one JSON document into generic values, using object
// instead of map[string]any so that key order is preserved.
func decodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("output: decoding result: %w", err)
	}
	return v, nil
}

// decodeValue decodes the next JSON value from dec.
func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return decodeObject(dec)
	case json.Delim('['):
		return decodeArray(dec)
	}
	if _, ok := tok.(json.Delim); ok {
		return nil, fmt.Errorf("unexpected %v", tok)
	}
	return tok, nil // float64, string, bool or nil
}

// decodeObject decodes the members of an object whose '{' has been read.
func decodeObject(dec *json.Decoder) (object, error) {
	obj := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		value, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		obj = append(obj, member{key: key, value: value})
	}
	_, err := dec.Token() // '}'
	return obj, err
}

// decodeArray decodes the elements of an array whose '[' has been read.
func decodeArray(dec *json.Decoder) ([]any, error) {
	items := []any{}
	for dec.More() {
		item, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	_, err := dec.Token() // ']'
	return items, err
}

// formatNumber formats a JSON number; integral values never get a decimal
// point or an exponent.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if math.Abs(f) < 1e-6 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// writeJSON writes v as JSON indented with two spaces per level; indent is
// the indentation of the line v starts on.
func writeJSON(b *bytes.Buffer, v any, indent string) {
	switch v := v.(type) {
	case object:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		inner := indent + "  "
		b.WriteString("{\n")
		for i, m := range v {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(inner)
			writeJSONString(b, m.key)
			b.WriteString(": ")
			writeJSON(b, m.value, inner)
		}
		b.WriteString("\n" + indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		inner := indent + "  "
		b.WriteString("[\n")
		for i, item := range v {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(inner)
			writeJSON(b, item, inner)
		}
		b.WriteString("\n" + indent + "]")
	case string:
		writeJSONString(b, v)
	case float64:
		b.WriteString(formatNumber(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
}

// writeJSONString writes s as a JSON string without HTML escaping.
func writeJSONString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}

// writeYAML writes v as a YAML document indented with two spaces.
func writeYAML(b *bytes.Buffer, v any) error {
	enc := yaml.NewEncoder(b)
	enc.SetIndent(2)
	if err := enc.Encode(yamlNode(v)); err != nil {
		return fmt.Errorf("output: encoding YAML: %w", err)
	}
	return enc.Close()
}

// yamlNode converts a generic value into a YAML node, keeping key order.
func yamlNode(v any) *yaml.Node {
	switch v := v.(type) {
	case object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, m := range v {
			n.Content = append(n.Content, yamlScalar("!!str", m.key), yamlNode(m.value))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range v {
			n.Content = append(n.Content, yamlNode(item))
		}
		return n
	case string:
		return yamlScalar("!!str", v)
	case float64:
		return yamlScalar(yamlNumberTag(v), formatNumber(v))
	case bool:
		return yamlScalar("!!bool", strconv.FormatBool(v))
	default:
		return yamlScalar("!!null", "null")
	}
}

// yamlNumberTag returns !!int for integral numbers that YAML reads back as
// integers and !!float for the rest, so that no explicit tag is printed.
func yamlNumberTag(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < math.MaxInt64 {
		return "!!int"
	}
	return "!!float"
}

// yamlScalar returns a scalar node; the encoder quotes !!str values that
// would otherwise read back as another type.
func yamlScalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// isScalar reports whether v is neither an object nor a list.
func isScalar(v any) bool {
	switch v.(type) {
	case object, []any:
		return false
	}
	return true
}

// formatScalar formats a scalar for table and tsv output: booleans as
// True/False, null as the empty string, nested values as the empty string.
func formatScalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return formatNumber(v)
	case bool:
		if v {
			return "True"
		}
		return "False"
	}
	return ""
}

// tabulate turns a list (or a single object) into column keys and rows of
// cell text. Objects contribute their scalar members, lists of scalars the
// column "Result", nested lists the columns Column1, Column2, ….
func tabulate(v any, columns []string) (keys []string, rows [][]string) {
	keys, records := cellRecords(v, false)
	keys = pickColumns(keys, columns)
	return keys, rowsOf(records, keys)
}

// cellRecords returns the cell text of each item of a list (or of a single
// object) by key, and the keys in the order they first appear. For a
// table, which people read, numbers follow format's rule (percentages to
// a tenth, other fractions to six significant digits); tsv and csv,
// which programs read, keep every digit.
func cellRecords(v any, forTable bool) (keys []string, records []map[string]string) {
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	records = make([]map[string]string, len(items))
	for i, item := range items {
		var rec object
		rec, keys = record(item, keys)
		records[i] = make(map[string]string, len(rec))
		for _, m := range rec {
			// Cells print what users wrote: escaped, so that no value
			// drives the terminal or forges a row or a column.
			cell := formatScalar(m.value)
			if f, ok := m.value.(float64); ok && forTable {
				cell = tableNumber(m.key, f)
			}
			records[i][m.key] = EscapeControls(cell, false)
		}
	}
	return keys, records
}

// rowsOf lays records out in the order of keys; a key a record lacks is an
// empty cell.
func rowsOf(records []map[string]string, keys []string) [][]string {
	rows := make([][]string, len(records))
	for i, rec := range records {
		rows[i] = make([]string, len(keys))
		for j, k := range keys {
			rows[i][j] = rec[k]
		}
	}
	return rows
}

// record returns the scalar cells of one table row and keys extended with
// the row's keys not seen before.
func record(item any, keys []string) (object, []string) {
	var rec object
	switch item := item.(type) {
	case object:
		for _, m := range item {
			if isScalar(m.value) {
				rec = append(rec, m)
			}
		}
	case []any:
		for i, v := range item {
			if isScalar(v) {
				rec = append(rec, member{key: "Column" + strconv.Itoa(i+1), value: v})
			}
		}
	default:
		rec = object{{key: "Result", value: item}}
	}
	for _, m := range rec {
		if !slices.Contains(keys, m.key) {
			keys = append(keys, m.key)
		}
	}
	return rec, keys
}

// pickColumns returns the preferred columns that are present in keys, or
// keys itself when none of them is.
func pickColumns(keys, columns []string) []string {
	var picked []string
	for _, c := range columns {
		if slices.Contains(keys, c) && !slices.Contains(picked, c) {
			picked = append(picked, c)
		}
	}
	if len(picked) == 0 {
		return keys
	}
	return picked
}

// writeTSV writes v as tab-separated values without a header: one line per
// item, or the value alone for a scalar.
func writeTSV(b *bytes.Buffer, v any, columns []string) {
	if isScalar(v) {
		b.WriteString(EscapeControls(formatScalar(v), false) + "\n")
		return
	}
	keys, rows := tabulate(v, columns)
	if len(keys) == 0 {
		return
	}
	for _, row := range rows {
		b.WriteString(strings.Join(row, "\t") + "\n")
	}
}

// writeCSV writes rows as CSV with a header line (the column keys), for
// spreadsheets.
func writeCSV(b *bytes.Buffer, v any, columns []string) error {
	w := csv.NewWriter(b)
	if isScalar(v) {
		return w.WriteAll([][]string{{formatScalar(v)}})
	}
	keys, rows := tabulate(v, columns)
	if len(keys) == 0 {
		return nil
	}
	if err := w.Write(keys); err != nil {
		return err
	}
	return w.WriteAll(rows)
}

// tableNumber is a number as a table shows it: a percentage (a key
// "percent" or "..._percent") as format.Percent, money ("usd", "..._usd",
// "cost", "..._cost", a budget's "spent") as format.USD, anything else as
// format.Number.
func tableNumber(key string, f float64) string {
	switch {
	case key == "percent" || strings.HasSuffix(key, "_percent"):
		return format.Percent(f)
	case key == "usd" || key == "spent" || key == "cost" || strings.HasSuffix(key, "_usd") || strings.HasSuffix(key, "_cost"):
		return format.USD(f)
	}
	return format.Number(f)
}

package cmdutil

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Headers come from the title map, then from words with acronyms in
// capitals: never Azure's v_cp_us split into "V Cp Us".
func TestHeaderName(t *testing.T) {
	for key, want := range map[string]string{
		"v_cp_us":             "vCPUs",
		"memory_gb":           "Memory GB",
		"gpus":                "GPUs",
		"gpu_model":           "GPU Model",
		"price_per_hour":      "USD/Hour",
		"dedicated_usd":       "Dedicated USD",
		"node_id":             "Node ID",
		"private_ip_address":  "Private IP Address",
		"ssh_port":            "SSH Port",
		"provisioning_state":  "Provisioning State",
		"source_ip":           "Source IP",
		"storage_quota_bytes": "Storage Quota Bytes",
		"Name":                "Name",
		"Column1":             "Column1",
		"os_vhd_size_mb":      "OS Vhd Size MB",
	} {
		if got := HeaderName(key); got != want {
			t.Errorf("HeaderName(%q) = %q, want %q", key, got, want)
		}
	}
}

// Keys the CLI's tables show have headers without a one-letter word or a
// mis-cased acronym ("V Cp Us", "Memory Gb", "Node Id"), the marks of a
// key split into words blindly. Each noun's package holds its own
// columns to the headers they print (TestColumnHeaders).
func TestColumnHeadersReadWell(t *testing.T) {
	lists := [][]string{{"name", "display_name", "status", "compute", "attempt_count", "status_reason", "created_on", "v_cp_us", "memory_gb", "gpus", "gpu_model",
		"price_per_hour", "low_priority_price_per_hour", "current_value", "exit_code", "start_time", "end_time", "node_hours", "usd", "dedicated_usd", "low_priority_usd"},
		{"node_id", "private_ip_address", "ssh_port", "principal_id", "client_id", "id", "v_cp_us", "low_priority_capable"}}
	for _, cols := range lists {
		for _, k := range cols {
			h := HeaderName(k)
			for _, w := range strings.Fields(h) {
				if a, ok := acronyms[strings.ToLower(w)]; (ok && w != a) || len(w) == 1 {
					t.Errorf("header of %q is %q", k, h)
				}
			}
		}
	}
	if h := HeaderName("v_cp_us"); h != "vCPUs" {
		t.Errorf("header of v_cp_us is %q", h)
	}
}

// Timestamps in tables are UTC to the second, whatever the fraction digits
// and offset the API wrote, so that their columns line up; other formats
// keep the API's text.
func TestTableTimestamps(t *testing.T) {
	type row struct {
		Name string    `json:"name"`
		Time time.Time `json:"time"`
		Note string    `json:"note"`
	}
	cet := time.FixedZone("CET", 3600)
	data := []row{
		{Name: "a", Time: time.Date(2024, 5, 1, 10, 0, 0, 123456789, time.UTC), Note: "2024-05-01 not a time"},
		{Name: "b", Time: time.Date(2024, 5, 1, 11, 0, 0, 0, cet), Note: "x"},
		{Name: "c", Time: time.Date(2024, 5, 1, 10, 0, 0, 500000000, time.UTC), Note: "y"},
	}
	var b bytes.Buffer
	if err := Render(&b, data, "table", "", nil); err != nil {
		t.Fatal(err)
	}
	want := `Name  Time                  Note
----  --------------------  ---------------------
a     2024-05-01T10:00:00Z  2024-05-01 not a time
b     2024-05-01T10:00:00Z  x
c     2024-05-01T10:00:00Z  y
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := Render(&b, data[:1], "tsv", "", nil); err != nil {
		t.Fatal(err)
	}
	if want := "a\t2024-05-01T10:00:00.123456789Z\t2024-05-01 not a time\n"; b.String() != want {
		t.Errorf("tsv = %q, want %q", b.String(), want)
	}
}

// Numeric columns are right-aligned, so that fixed decimals line up; a
// column with any word in it stays left-aligned.
func TestTableNumericColumnsAlignRight(t *testing.T) {
	data := []map[string]any{{"key": "a", "usd": "12.50", "n": "3"}, {"key": "bb", "usd": "0.25", "n": "x"}}
	var b bytes.Buffer
	if err := Render(&b, data, "table", "", []string{"key", "usd", "n"}); err != nil {
		t.Fatal(err)
	}
	want := "Key    USD  N\n---  -----  -\na    12.50  3\nbb    0.25  x\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", b.String(), want)
	}
}

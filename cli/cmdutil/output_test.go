package cmdutil

import (
	"bytes"
	"strings"
	"testing"
)

// renderTestSpec is a nested object whose keys are not in alphabetical order.
type renderTestSpec struct {
	Zone  string `json:"zone"`
	Cores int    `json:"cores"`
}

// renderTestCompute exercises snake_case tags, nesting, lists, bools,
// integers, a large integer and a nil pointer.
type renderTestCompute struct {
	Name              string         `json:"name"`
	ProvisioningState string         `json:"provisioning_state"`
	MaxInstances      int            `json:"max_instances"`
	Enabled           bool           `json:"enabled"`
	CreatedAtMs       int64          `json:"created_at_ms"`
	Description       *string        `json:"description"`
	Spec              renderTestSpec `json:"spec"`
	Tags              []string       `json:"tags"`
}

// renderTestData returns two computes; the first has a nil description and
// HTML-special characters in a tag.
func renderTestData() []renderTestCompute {
	desc := "a & b <c>"
	return []renderTestCompute{
		{
			Name: "cpu-cluster", ProvisioningState: "Succeeded", MaxInstances: 4, Enabled: true,
			CreatedAtMs: 1700000000000, Spec: renderTestSpec{Zone: "eastus", Cores: 8},
			Tags: []string{"dev", "<gpu>&"},
		},
		{
			Name: "small", ProvisioningState: "Creating", MaxInstances: 1, Enabled: false,
			CreatedAtMs: 1700000000001, Description: &desc, Spec: renderTestSpec{Zone: "westus", Cores: 2},
			Tags: []string{},
		},
	}
}

const renderTestJSON = `[
  {
    "name": "cpu-cluster",
    "provisioning_state": "Succeeded",
    "max_instances": 4,
    "enabled": true,
    "created_at_ms": 1700000000000,
    "description": null,
    "spec": {
      "zone": "eastus",
      "cores": 8
    },
    "tags": [
      "dev",
      "<gpu>&"
    ]
  },
  {
    "name": "small",
    "provisioning_state": "Creating",
    "max_instances": 1,
    "enabled": false,
    "created_at_ms": 1700000000001,
    "description": "a & b <c>",
    "spec": {
      "zone": "westus",
      "cores": 2
    },
    "tags": []
  }
]
`

const renderTestYAML = `- name: cpu-cluster
  provisioning_state: Succeeded
  max_instances: 4
  enabled: true
  created_at_ms: 1700000000000
  description: null
  spec:
    zone: eastus
    cores: 8
  tags:
    - dev
    - <gpu>&
- name: small
  provisioning_state: Creating
  max_instances: 1
  enabled: false
  created_at_ms: 1700000000001
  description: a & b <c>
  spec:
    zone: westus
    cores: 2
  tags: []
`

const renderTestTable = `Name         Provisioning State  Max Instances  Enabled  Created At Ms  Description
-----------  ------------------  -------------  -------  -------------  -----------
cpu-cluster  Succeeded                       4  True     1700000000000
small        Creating                        1  False    1700000000001  a & b <c>
`

const renderTestTSV = "cpu-cluster\tSucceeded\t4\tTrue\t1700000000000\t\n" +
	"small\tCreating\t1\tFalse\t1700000000001\ta & b <c>\n"

func TestRender(t *testing.T) {
	data := renderTestData()
	tests := []struct {
		name    string
		data    any
		format  string
		query   string
		columns []string
		want    string
	}{
		// No query: key order of the Go struct is kept.
		{name: "json", data: data, format: "json", want: renderTestJSON},
		{name: "jsonc", data: data, format: "jsonc", want: renderTestJSON},
		{name: "yaml", data: data, format: "yaml", want: renderTestYAML},
		{name: "yamlc", data: data, format: "yamlc", want: renderTestYAML},
		{name: "table", data: data, format: "table", want: renderTestTable},
		{name: "tsv", data: data, format: "tsv", want: renderTestTSV},
		{name: "none", data: data, format: "none", want: ""},

		// Filter projection: a list of scalars.
		{name: "filter/json", data: data, format: "json", query: "[?max_instances > `1`].name", want: "[\n  \"cpu-cluster\"\n]\n"},
		{name: "filter/yaml", data: data, format: "yaml", query: "[?max_instances > `1`].name", want: "- cpu-cluster\n"},
		{name: "filter/table", data: data, format: "table", query: "[?max_instances > `1`].name", want: "Result\n-----------\ncpu-cluster\n"},
		{name: "filter/tsv", data: data, format: "tsv", query: "[?max_instances > `1`].name", want: "cpu-cluster\n"},
		{name: "filter/none", data: data, format: "none", query: "[?max_instances > `1`].name", want: ""},

		// A nested list, with HTML-special characters left unescaped.
		{name: "tags/json", data: data, format: "json", query: "[0].tags", want: "[\n  \"dev\",\n  \"<gpu>&\"\n]\n"},
		{name: "tags/yaml", data: data, format: "yaml", query: "[0].tags", want: "- dev\n- <gpu>&\n"},
		{name: "tags/table", data: data, format: "table", query: "[0].tags", want: "Result\n------\ndev\n<gpu>&\n"},
		{name: "tags/tsv", data: data, format: "tsv", query: "[0].tags", want: "dev\n<gpu>&\n"},

		// A scalar number result prints without a decimal point.
		{name: "length/json", data: data, format: "json", query: "length(@)", want: "2\n"},
		{name: "length/yaml", data: data, format: "yaml", query: "length(@)", want: "2\n"},
		{name: "length/table", data: data, format: "table", query: "length(@)", want: "2\n"},
		{name: "length/tsv", data: data, format: "tsv", query: "length(@)", want: "2\n"},
		{name: "length/none", data: data, format: "none", query: "length(@)", want: ""},

		// With a query, object keys are sorted alphabetically.
		{name: "sorted/json", data: data, format: "json", query: "[0].spec", want: "{\n  \"cores\": 8,\n  \"zone\": \"eastus\"\n}\n"},
		{name: "sorted/yaml", data: data, format: "yaml", query: "[0].spec", want: "cores: 8\nzone: eastus\n"},
		{name: "sorted/table", data: data, format: "table", query: "[0].spec", want: "Cores  Zone\n-----  ------\n    8  eastus\n"},
		{name: "sorted/tsv", data: data, format: "tsv", query: "[0].spec", want: "8\teastus\n"},

		// A null result prints nothing, as in az.
		{name: "null/json", data: data, format: "json", query: "missing", want: ""},
		{name: "null/table", data: data, format: "table", query: "missing", want: ""},
		{name: "nil data", data: (*renderTestCompute)(nil), format: "yaml", want: ""},

		// Preferred columns: unknown ones are dropped, all unknown falls back.
		{
			name: "columns/table", data: data, format: "table", columns: []string{"max_instances", "nope", "name"},
			want: "Max Instances  Name\n-------------  -----------\n            4  cpu-cluster\n            1  small\n",
		},
		{name: "columns/tsv", data: data, format: "tsv", columns: []string{"enabled", "name"}, want: "True\tcpu-cluster\nFalse\tsmall\n"},
		{name: "columns fallback", data: data, format: "tsv", columns: []string{"nope"}, want: renderTestTSV},

		// A single object is a one-row table; a scalar prints as is.
		{
			name: "object/table", data: data[1].Spec, format: "table",
			want: "Zone    Cores\n------  -----\nwestus      2\n",
		},
		{name: "object/tsv", data: data[1], format: "tsv", want: "small\tCreating\t1\tFalse\t1700000000001\ta & b <c>\n"},
		{name: "bool/table", data: true, format: "table", want: "True\n"},
		{name: "bool/tsv", data: false, format: "tsv", want: "False\n"},
		{name: "string/yaml", data: "true", format: "yaml", want: "\"true\"\n"},

		// Numbers: integral values never get a decimal point or exponent.
		{
			name: "numbers/json", data: map[string]any{"a": 2.0, "b": 0.5, "c": 1e21}, format: "json",
			want: "{\n  \"a\": 2,\n  \"b\": 0.5,\n  \"c\": 1000000000000000000000\n}\n",
		},
		{
			name: "numbers/yaml", data: map[string]any{"a": 2.0, "b": 0.5, "c": 1e21}, format: "yaml",
			want: "a: 2\nb: 0.5\nc: 1000000000000000000000\n",
		},
		{name: "numbers/tsv", data: []float64{2, 0.5, 1e21}, format: "tsv", want: "2\n0.5\n1000000000000000000000\n"},

		// Empty values.
		{name: "empty/json", data: []int{}, format: "json", want: "[]\n"},
		{name: "empty/yaml", data: map[string]any{}, format: "yaml", want: "{}\n"},
		{name: "empty/table", data: []int{}, format: "table", want: "(none)\n"},
		{name: "empty/tsv", data: []int{}, format: "tsv", want: ""},
		{name: "nil list/table", data: []int(nil), format: "table", want: "(none)\n"},
		{name: "nil list/json", data: []int(nil), format: "json", want: ""},
		{name: "nil list with a query/table", data: []int(nil), format: "table", query: "[0]", want: ""},
		{name: "empty/csv", data: []int{}, format: "csv", want: ""},
		{name: "empty query/table", data: data, format: "table", query: "[?max_instances > `9`]", want: "(none)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, tt.data, tt.format, tt.query, tt.columns); err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("Render output mismatch\ngot:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name, format, query, want string
	}{
		{
			name: "unknown format", format: "xml",
			want: `--output: unknown format "xml"; use one of json, jsonc, yaml, yamlc, table, tsv, csv, none`,
		},
		{name: "invalid query", format: "json", query: "[?", want: "--query: invalid JMESPath expression: "},
		{name: "invalid query with none", format: "none", query: "[?", want: "--query: invalid JMESPath expression: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Render(&buf, renderTestData(), tt.format, tt.query, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Render error = %v, want prefix %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("Render wrote %q on error", buf.String())
			}
		})
	}
}

func TestOutputFormatsAllRender(t *testing.T) {
	for _, format := range OutputFormats {
		if err := Render(&bytes.Buffer{}, renderTestData(), format, "", nil); err != nil {
			t.Errorf("Render(%q): %v", format, err)
		}
	}
}

// CSV output: a header of the column keys, then one line per row, quoted
// where a value needs it.
func TestRenderCSV(t *testing.T) {
	var b bytes.Buffer
	rows := []map[string]any{{"key": "team, a", "usd": 1.5}, {"key": "b", "usd": 2}}
	if err := Render(&b, rows, "csv", "", []string{"key", "usd"}); err != nil {
		t.Fatal(err)
	}
	if want := "key,usd\n\"team, a\",1.5\nb,2\n"; b.String() != want {
		t.Errorf("csv:\n%s\nwant\n%s", b.String(), want)
	}
}

package parallel_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	par "github.com/shoal-ml/shoal/domain/parallel"
)

// sumScript returns its DataFrame with a column more: the rows' a+b.
const sumScript = `
import pandas as pd
def init(): pass
def run(df):
    assert isinstance(df, pd.DataFrame), type(df)
    df["s"] = df["a"] + df["b"]
    if df["a"].iloc[0] == 0:
        # A value with a line break still makes one row per row.
        df["s"] = df["s"].astype(str)
        df.loc[0, "s"] = "1000\nx"
    return df
`

// An mltable's rows go in mini-batches of about mini_batch_size bytes,
// cut at line boundaries, each a DataFrame for run; the rows run returns
// are appended space-separated, in order.
func TestDriverSplitsATableByBytes(t *testing.T) {
	requirePandas(t)
	t.Run("PyYAML", func(t *testing.T) { testBytes(t, nil) })
	t.Run("own YAML reader", func(t *testing.T) { testBytes(t, withoutPyYAML(t)) })
}

func testBytes(t *testing.T, env map[string]string) {
	l, srv := paralleltest.New(t)
	in := t.TempDir()
	var csv strings.Builder
	csv.WriteString("a,b\n")
	for i := range 200 {
		fmt.Fprintf(&csv, "%d,%d\n", i, 1000+i)
	}
	writeFiles(t, in, map[string]string{
		"MLTable":  "# what Azure's iris example holds\npaths:\n  - file: ./rows.csv\ntransformations:\n  - read_delimited:\n      delimiter: \",\"\n      encoding: utf8\n      header: all_files_same_headers\n",
		"rows.csv": csv.String(),
	})
	sp := spec("sum.py")
	sp.MiniBatchSize, sp.AppendRowTo, sp.MaxConcurrencyPerInstance = "1kb", "${{outputs.out}}", 2
	r := rankRun{spec: sp, inputType: "mltable", input: in, code: map[string]string{"sum.py": sumScript},
		outputs: []string{"out"}, fileOutputs: map[string]string{"out": "scores.txt"}, env: env}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	_, completes, plans := l.Snapshot()
	if p := plans[0]; p.Kind != par.KindRows || p.Items != 200 || p.MiniBatches < 2 {
		t.Errorf("plan: %+v", p)
	}
	for _, c := range completes {
		if c.Outcome != par.OutcomeDone || c.Items != len(c.Rows) {
			t.Errorf("complete: %+v", c)
		}
	}
	rows := strings.Split(strings.TrimSpace(read(t, filepath.Join(r.outDir, "out", "scores.txt"))), "\n")
	if len(rows) != 200 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0] != `0 1000 "1000\nx"` {
		t.Errorf("row 0 = %q", rows[0])
	}
	for i, row := range rows[1:] {
		i++
		if want := fmt.Sprintf("%d %d %d", i, 1000+i, 1000+2*i); row != want {
			t.Fatalf("row %d = %q, want %q", i, row, want)
		}
	}
}

// partition_keys make one mini-batch per distinct value, sorted, the
// columns taken from the files' paths as Azure's partition example's
// MLTable says; run(mini_batch, mini_batch_context) gets the value.
func TestDriverPartitionsATableByKeys(t *testing.T) {
	requirePandas(t)
	t.Run("PyYAML", func(t *testing.T) { testPartitions(t, nil) })
	t.Run("own YAML reader", func(t *testing.T) { testPartitions(t, withoutPyYAML(t)) })
}

func testPartitions(t *testing.T, env map[string]string) {
	l, srv := paralleltest.New(t)
	in := t.TempDir()
	writeFiles(t, in, map[string]string{
		// As yaml.dump writes it in Azure's partition_data.py.
		"MLTable": `paths:
- pattern: ./**/*.csv
transformations:
- read_delimited:
    delimiter: ','
    empty_as_string: false
    encoding: ascii
    header: all_files_same_headers
    include_path_column: true
- extract_columns_from_partition_format:
    partition_format: '{Store}/{Brand}/{file_name}.{extension}'
- drop_columns:
  - Path
  - file_name
  - extension
type: mltable
`,
		"2/tropicana/partitioned_data.csv": "Quantity,Price\n5,NA\n",
		"1/dominicks/partitioned_data.csv": "Quantity,Price\n1,1.50\n2,1.5\n",
		"1/tropicana/partitioned_data.csv": "Quantity,Price\n3,1.50\n4,2\n6,1.50\n",
		"notes.txt":                        "not a csv",
	})
	script := `
def init(): pass
def run(df, ctx):
    k = ctx.partition_key_value
    assert "Path" not in df.columns, df.columns
    return ["%s %s %s %d %d" % (k["Store"], k["Brand"], k["Price"], len(df), df["Quantity"].sum())]
`
	sp := spec("part.py")
	// Price's text is the key: 1.50 and 1.5 are two values, NA one.
	sp.PartitionKeys, sp.AppendRowTo = []string{"Store", "Brand", "Price"}, "${{outputs.out}}"
	r := rankRun{spec: sp, inputType: "mltable", input: in, code: map[string]string{"part.py": script},
		outputs: []string{"out"}, env: env}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	_, completes, plans := l.Snapshot()
	if p := plans[0]; p.Kind != par.KindPartitions || p.Items != 6 || p.MiniBatches != 5 {
		t.Errorf("plan: %+v", p)
	}
	got := read(t, filepath.Join(r.outDir, "out", "parallel_run_step.txt"))
	if want := "1 dominicks 1.5 1 2\n1 dominicks 1.50 1 1\n1 tropicana 1.50 2 9\n1 tropicana 2 1 4\n2 tropicana NA 1 5\n"; got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	// One row for a mini-batch of several rows is not a failure of a
	// table: only a file batch holds run to a row per item.
	for _, c := range completes {
		if c.Outcome != par.OutcomeDone {
			t.Errorf("complete: %+v", c)
		}
	}
}

// An mltable folder without its MLTable file, or whose partition_keys
// name no column, fails the rank at once naming the field.
func TestDriverRefusesABadTable(t *testing.T) {
	requirePandas(t)
	for name, c := range map[string]struct {
		files  map[string]string
		keys   []string
		size   string
		noYAML bool
		want   string
	}{
		"no MLTable": {files: map[string]string{"rows.csv": "a\n1\n"}, want: "input_data: the mltable input has no MLTable file at its root"},
		"no paths":   {files: map[string]string{"MLTable": "type: mltable\n"}, want: "input_data: the MLTable file names no paths"},
		"outside":    {files: map[string]string{"MLTable": "paths:\n  - file: ../../etc/passwd\n"}, want: "outside the mltable's folder"},
		"missing":    {files: map[string]string{"MLTable": "paths:\n  - file: ./nope.csv\n"}, want: "names file './nope.csv', which the input does not hold"},
		"bad key":    {files: map[string]string{"MLTable": "paths:\n  - file: ./rows.csv\n", "rows.csv": "a\n1\n"}, keys: []string{"Store"}, want: "partition_keys: the table has no column Store"},
		"long line":  {files: map[string]string{"MLTable": "paths:\n  - file: ./" + strings.Repeat("a", 1<<20) + "\n"}, noYAML: true, want: "the MLTable file could not be read: a line of"},
		"deep":       {files: map[string]string{"MLTable": "paths:\n" + deepYAML(2000)}, noYAML: true, want: "the MLTable file could not be read"},
		"transform":  {files: map[string]string{"MLTable": "paths:\n  - file: ./rows.csv\ntransformations:\n  - read_parquet: {}\n", "rows.csv": "a\n"}, want: "read_parquet' is not one Shoal reads"},
	} {
		t.Run(name, func(t *testing.T) {
			l, srv := paralleltest.New(t)
			in := t.TempDir()
			writeFiles(t, in, c.files)
			sp := spec("sum.py")
			sp.PartitionKeys, sp.MiniBatchSize = c.keys, c.size
			var env map[string]string
			if c.noYAML {
				env = withoutPyYAML(t)
			}
			r := rankRun{spec: sp, inputType: "mltable", input: in, code: map[string]string{"sum.py": sumScript}, env: env}.run(t, srv.URL, l.Token)
			if r.code != 1 || !strings.Contains(r.out, c.want) {
				t.Fatalf("exit %d, want 1 saying %q:\n%s", r.code, c.want, r.out)
			}
			if _, _, plans := l.Snapshot(); len(plans) != 0 {
				t.Errorf("plans: %+v", plans)
			}
		})
	}
}

// read_delimited's header modes: the first file's header names the
// columns of every file (from_first_file), or no file has one
// (no_header: Column1, Column2, ... as Azure names them); a delimiter
// other than a comma; files in the order of their paths.
func TestDriverReadsATablesHeaderModes(t *testing.T) {
	requirePandas(t)
	script := `
def init(): pass
def run(df):
    return [" ".join(df.columns)] + [str(r) for r in df.iloc[:, 0]]
`
	for mode, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"from_first_file": {map[string]string{"b.csv": "3;4\n", "a.csv": "x;y\n1;2\n"}, "x y\n1\nx y\n3\n"},
		"no_header":       {map[string]string{"a.csv": "1;2\n", "b.csv": "3;4\n"}, "Column1 Column2\n1\nColumn1 Column2\n3\n"},
	} {
		t.Run(mode, func(t *testing.T) {
			l, srv := paralleltest.New(t)
			in := t.TempDir()
			c.files["MLTable"] = "paths:\n  - pattern: ./*.csv\ntransformations:\n  - read_delimited: {delimiter: ';', header: " + mode + "}\n"
			writeFiles(t, in, c.files)
			sp := spec("cols.py")
			sp.AppendRowTo = "${{outputs.out}}"
			r := rankRun{spec: sp, inputType: "mltable", input: in, code: map[string]string{"cols.py": script},
				outputs: []string{"out"}, env: withoutPyYAML(t)}.run(t, srv.URL, l.Token)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.out)
			}
			if got := read(t, filepath.Join(r.outDir, "out", "parallel_run_step.txt")); got != c.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// deepYAML is a sequence nested n deep, one level a line.
func deepYAML(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "-\n")
	}
	return b.String()
}

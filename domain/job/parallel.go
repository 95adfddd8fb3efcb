package job

import (
	"fmt"
	"strconv"
	"strings"
)

// JobTypeParallel is a parallel job (Azure's `type: parallel`): a pipeline
// step, or the job a batch endpoint's invocation starts, whose input is
// split into mini-batches that the step's nodes score with the entry
// script's run(mini_batch).
const JobTypeParallel = "parallel"

// ComponentTypeParallel is a parallel component (Azure's
// parallelComponent schema): what a `type: parallel` step runs.
const ComponentTypeParallel = "parallel"

// ParallelDriverEnv names the variable that holds the path of the driver
// the agent writes for a parallel job's rank: the job's command runs it.
const ParallelDriverEnv = "SHOAL_PARALLEL_DRIVER"

// ParallelCommand is the command of a parallel job: Shoal's driver,
// which takes the program arguments (${{inputs.*}} and ${{outputs.*}}
// substituted like any command's) and hands them to the entry script as
// its sys.argv, as Azure's parallel run does.
func ParallelCommand(programArguments string) string {
	c := `python3 "$` + ParallelDriverEnv + `"`
	if a := strings.TrimSpace(programArguments); a != "" {
		c += " " + a
	}
	return c
}

// Parallel defaults, Azure's.
const (
	// DefaultMiniBatchFiles is a file input's mini_batch_size.
	DefaultMiniBatchFiles = 10
	// DefaultMiniBatchBytes is a table's mini_batch_size (1 MB).
	DefaultMiniBatchBytes = 1 << 20
	// DefaultParallelRetries is retry_settings.max_retries.
	DefaultParallelRetries = 3
	// DefaultParallelTimeout is retry_settings.timeout, seconds per
	// mini-batch.
	DefaultParallelTimeout = 60
	// MaxMiniBatches bounds the mini-batches of one job: past it, the
	// job fails saying to raise mini_batch_size.
	MaxMiniBatches = 200_000
)

// ParallelSpec is what makes a job parallel: which input is split, into
// what mini-batches, and how the entry script's init() and
// run(mini_batch) run on the job's nodes (instance_count is
// resources.instance_count). It is Azure's parallel job's settings, and
// a batch deployment's settings translated to them.
type ParallelSpec struct {
	// InputData names the job input whose data is split (input_data:
	// ${{inputs.<name>}} as written): a uri_folder's files, or an
	// mltable's rows.
	InputData string `json:"input_data"`
	// MiniBatchSize is as written: a number of files ("10"), or for a
	// table a size ("100kb", "10mb", "1gb"); empty takes the default.
	MiniBatchSize string `json:"mini_batch_size,omitempty"`
	// MaxConcurrencyPerInstance is how many run() calls each node runs at
	// once, each in a worker process of its own; 0 means 1.
	MaxConcurrencyPerInstance int `json:"max_concurrency_per_instance,omitempty"`
	// MiniBatchErrorThreshold is how many mini-batches may fail (run
	// raised, or timed out, on every try) before the job fails; nil or
	// -1: any number.
	MiniBatchErrorThreshold *int `json:"mini_batch_error_threshold,omitempty"`
	// ErrorThreshold is how many items (files, rows) may fail before the
	// job fails; nil or -1: any number.
	ErrorThreshold *int `json:"error_threshold,omitempty"`
	// Retry is retry_settings.
	Retry *ParallelRetry `json:"retry_settings,omitempty"`
	// LoggingLevel is the driver's and the entry script's logging level
	// (DEBUG, INFO, WARNING, ERROR, CRITICAL); empty: INFO.
	LoggingLevel string `json:"logging_level,omitempty"`
	// PartitionKeys, for a table, make each mini-batch the rows of one
	// value of these columns (mini_batch_size is then not used).
	PartitionKeys []string `json:"partition_keys,omitempty"`
	// EntryScript is the file of the code folder that defines init()
	// and run(mini_batch) (task.entry_script; a batch deployment's
	// code_configuration.scoring_script).
	EntryScript string `json:"entry_script"`
	// ProgramArguments are task.program_arguments as written; the job's
	// command (ParallelCommand) carries them, substituted.
	ProgramArguments string `json:"program_arguments,omitempty"`
	// AppendRowTo names the output the rows run() returns are appended
	// to (task.append_row_to: ${{outputs.<name>}}); empty: the rows are
	// not kept (a batch deployment's output_action: summary_only).
	AppendRowTo string `json:"append_row_to,omitempty"`
	// AppendRowFile is the file the rows go to when AppendRowTo is a
	// uri_folder output (a batch deployment's output_file_name,
	// predictions.csv by default); empty for a uri_file output, whose
	// file is its own.
	AppendRowFile string `json:"append_row_file,omitempty"`
	// ModelInput names the input that holds a batch deployment's model:
	// its folder is AZUREML_MODEL_DIR for the scoring script.
	ModelInput string `json:"model_input,omitempty"`
}

// ParallelRetry is a parallel job's retry_settings.
type ParallelRetry struct {
	// MaxRetries is how many more times a mini-batch whose run raised or
	// timed out is tried; nil: DefaultParallelRetries.
	MaxRetries *int `json:"max_retries,omitempty"`
	// Timeout is the seconds one run(mini_batch) may take; 0:
	// DefaultParallelTimeout.
	Timeout int `json:"timeout,omitempty"`
}

// Concurrency is max_concurrency_per_instance, default 1.
func (p *ParallelSpec) Concurrency() int {
	if p.MaxConcurrencyPerInstance < 1 {
		return 1
	}
	return p.MaxConcurrencyPerInstance
}

// MaxRetries is retry_settings.max_retries, default 3.
func (p *ParallelSpec) MaxRetries() int {
	if p.Retry == nil || p.Retry.MaxRetries == nil {
		return DefaultParallelRetries
	}
	return *p.Retry.MaxRetries
}

// TimeoutSeconds is retry_settings.timeout, default 60.
func (p *ParallelSpec) TimeoutSeconds() int {
	if p.Retry == nil || p.Retry.Timeout <= 0 {
		return DefaultParallelTimeout
	}
	return p.Retry.Timeout
}

// Threshold reads an error threshold: -1 (no limit) for nil.
func Threshold(t *int) int {
	if t == nil {
		return -1
	}
	return *t
}

// MiniBatch is a parsed mini_batch_size: Files items of a file input, or
// Bytes of a table (one of them set).
type MiniBatch struct {
	Files int
	Bytes int64
}

// ParseMiniBatchSize parses a mini_batch_size: a positive whole number of
// files ("10"), or a size with a unit (kb, mb, gb; case-insensitive; "100mb").
// For a table (table true) a bare number is a size in bytes, as Azure's
// SDK sends "10kb" as 10240. Empty gives the defaults for a file input
// (table false) or a table.
func ParseMiniBatchSize(s string, table bool) (MiniBatch, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		if table {
			return MiniBatch{Bytes: DefaultMiniBatchBytes}, nil
		}
		return MiniBatch{Files: DefaultMiniBatchFiles}, nil
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"b", 1}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 1 || n > (1<<40)/u.mult {
				return MiniBatch{}, fmt.Errorf("mini_batch_size %q: want a whole number of files (\"10\") or a size such as \"100kb\", \"10mb\" or \"1gb\"", s)
			}
			return MiniBatch{Bytes: n * u.mult}, nil
		}
	}
	if table {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > 1<<40 {
			return MiniBatch{}, fmt.Errorf("mini_batch_size %q: want a whole number of bytes (\"10240\") or a size with a unit (\"100kb\", \"10mb\", \"1gb\")", s)
		}
		return MiniBatch{Bytes: n}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1_000_000 {
		return MiniBatch{}, fmt.Errorf("mini_batch_size %q: want a whole number of files from 1 to 1000000 (\"10\") or a size such as \"100kb\", \"10mb\" or \"1gb\"", s)
	}
	return MiniBatch{Files: n}, nil
}

// ParallelProgress is where a parallel job's mini-batches stand, read from
// its ledger when the job is shown (never stored on the job).
type ParallelProgress struct {
	// MiniBatches is how many the input was split into (0 until the
	// first node listed it); Items is how many files or rows they hold.
	MiniBatches int `json:"mini_batches"`
	Items       int `json:"items"`
	// Done finished (their rows kept); Failed failed on every try;
	// Retried counts tries that failed and were given again; InFlight
	// are being run; Left are not finished yet (InFlight among them).
	Done     int `json:"done"`
	Failed   int `json:"failed"`
	Retried  int `json:"retried"`
	InFlight int `json:"in_flight"`
	Left     int `json:"left"`
	// FailedItems counts the items that failed (run raised for them,
	// or returned fewer rows than its mini-batch's items).
	FailedItems int `json:"failed_items"`
	// PerMinute is the mini-batches finished per minute over the last
	// few minutes; ETA is when the rest should be done at that rate.
	PerMinute float64 `json:"per_minute,omitempty"`
	ETA       string  `json:"eta,omitempty"`
	// Aborted says why the job stopped taking mini-batches (an error
	// threshold passed), naming the failed items.
	Aborted string `json:"aborted,omitempty"`
}

// Package paralleljob reads Azure's parallel jobs: the settings of a
// `type: parallel` pipeline step or component (input_data,
// mini_batch_size, thresholds, retry_settings, task...) into a
// job.ParallelSpec, and the rules a job with such settings follows
// (Validate). A parallel job runs as a command job whose command is
// Shoal's driver (job.ParallelCommand); nothing here runs it.
package paralleljob

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// SettingKeys are the keys a parallel step or component has besides a
// step's or component's own (inputs, outputs, compute, resources...).
var SettingKeys = compute.KeySchema{
	"input_data": nil, "mini_batch_size": nil, "max_concurrency_per_instance": nil,
	"mini_batch_error_threshold": nil, "error_threshold": nil, "logging_level": nil, "partition_keys": nil,
	"retry_settings": compute.KeySchema{"max_retries": nil, "timeout": nil},
	"task":           taskKeys,
}

// taskKeys are the keys of task. model is Azure's task type model's,
// refused with a sentence (TaskTypeRunFunction is the one Shoal runs);
// code_asset is the code version code was packed from, as a command
// job's (the Resource Manager routes set it).
var taskKeys = compute.KeySchema{
	"type": nil, "code": nil, "code_asset": nil, "entry_script": nil, "environment": nil, "program_arguments": nil,
	"append_row_to": nil, "model": nil,
}

// TaskTypeRunFunction is the task type Shoal runs: the entry script's
// init() and run(mini_batch).
const TaskTypeRunFunction = "run_function"

// Task is what a parallel step's task runs, besides the settings: the
// code folder (as written, or the artifact the CLI uploaded) and the
// environment (a reference or an inline mapping), which become the job's
// Code and Environment.
type Task struct {
	Code        string
	CodeAsset   string
	Environment any
}

// IsSettingKey reports whether key is one of a parallel step's own keys.
func IsSettingKey(key string) bool {
	_, ok := SettingKeys[key]
	return ok
}

// DecodeSettings reads the parallel settings of a step or component
// mapping (obj; prefix is its path in the document, "jobs.score.").
// Errors name the key; the rules across keys (input_data naming a
// declared input...) are CheckComponent's and Validate's.
func DecodeSettings(obj jobdecode.JobDocument, prefix string) (*job.ParallelSpec, *Task, error) {
	p := &job.ParallelSpec{}
	var err error
	if p.InputData, err = jobdecode.JobString(obj["input_data"], prefix+"input_data"); err != nil {
		return nil, nil, err
	}
	if p.MiniBatchSize, err = jobio.Text(obj["mini_batch_size"], prefix+"mini_batch_size"); err != nil {
		return nil, nil, err
	}
	if p.LoggingLevel, err = jobdecode.JobString(obj["logging_level"], prefix+"logging_level"); err != nil {
		return nil, nil, err
	}
	if n, err := compute.CheckInteger(prefix+"max_concurrency_per_instance", nonNull(obj["max_concurrency_per_instance"])); err != nil {
		return nil, nil, err
	} else if n != nil {
		if *n < 1 {
			return nil, nil, core.FieldErrorf(prefix+"max_concurrency_per_instance", "must be at least 1 (how many run() calls each node runs at once), got %d", *n)
		}
		p.MaxConcurrencyPerInstance = *n
	}
	for _, t := range []struct {
		key string
		dst **int
	}{{"mini_batch_error_threshold", &p.MiniBatchErrorThreshold}, {"error_threshold", &p.ErrorThreshold}} {
		if *t.dst, err = compute.CheckInteger(prefix+t.key, nonNull(obj[t.key])); err != nil {
			return nil, nil, err
		}
	}
	if raw := compute.NonNull(obj["retry_settings"]); raw != nil {
		if p.Retry, err = decodeRetry(raw, prefix+"retry_settings"); err != nil {
			return nil, nil, err
		}
	}
	if raw := compute.NonNull(obj["partition_keys"]); raw != nil {
		if jobdecode.JSONKind(raw) != '[' || json.Unmarshal(raw, &p.PartitionKeys) != nil {
			return nil, nil, core.FieldErrorf(prefix+"partition_keys", "must be a list of column names, got %s", compute.ShortJSON(raw))
		}
	}
	task, err := decodeTask(obj["task"], prefix+"task", p)
	if err != nil {
		return nil, nil, err
	}
	return p, task, nil
}

// nonNull makes an absent key read as null for compute.CheckInteger.
func nonNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

func decodeRetry(raw json.RawMessage, field string) (*job.ParallelRetry, error) {
	m, err := jobdecode.CheckedMapping(raw, field, compute.KeySchema{"max_retries": nil, "timeout": nil})
	if err != nil {
		return nil, err
	}
	r := &job.ParallelRetry{}
	if r.MaxRetries, err = compute.CheckInteger(field+".max_retries", nonNull(m["max_retries"])); err != nil {
		return nil, err
	}
	t, err := compute.CheckInteger(field+".timeout", nonNull(m["timeout"]))
	if err != nil {
		return nil, err
	}
	if t != nil {
		if *t < 1 {
			return nil, core.FieldErrorf(field+".timeout", "must be at least 1 (the seconds one run(mini_batch) may take), got %d", *t)
		}
		r.Timeout = *t
	}
	return r, nil
}

// decodeTask reads task into p (entry script, program arguments,
// append_row_to) and the Task (code, environment).
func decodeTask(raw json.RawMessage, field string, p *job.ParallelSpec) (*Task, error) {
	if compute.NonNull(raw) == nil {
		return nil, core.FieldErrorf(field, "is required: {type: run_function, code, entry_script, environment, program_arguments, append_row_to}")
	}
	m, err := jobdecode.CheckedMapping(raw, field, taskKeys)
	if err != nil {
		return nil, err
	}
	typ, err := jobdecode.JobString(m["type"], field+".type")
	if err != nil {
		return nil, err
	}
	switch t := strings.ToLower(strings.TrimSpace(typ)); t {
	case "", TaskTypeRunFunction:
	case "model", "function":
		return nil, core.FieldErrorf(field+".type", "%q tasks are not run by Shoal: a parallel task is type: run_function, an entry_script in code with init() and run(mini_batch)", t)
	default:
		return nil, core.FieldErrorf(field+".type", "%q is not a task type: a parallel task is type: run_function", core.Short(typ))
	}
	if compute.NonNull(m["model"]) != nil {
		return nil, core.FieldErrorf(field+".model", "belongs to Azure's model tasks, which Shoal does not run: give the model as an input and read it in init()")
	}
	fields := []jobdecode.JobField{
		jobdecode.StringField("entry_script", &p.EntryScript),
		jobdecode.StringField("append_row_to", &p.AppendRowTo),
	}
	if err := m.DecodeFields(field+".", fields...); err != nil {
		return nil, err
	}
	p.EntryScript, p.AppendRowTo = strings.TrimSpace(p.EntryScript), strings.TrimSpace(p.AppendRowTo)
	if p.ProgramArguments, err = jobio.Text(m["program_arguments"], field+".program_arguments"); err != nil {
		return nil, err
	}
	p.ProgramArguments = strings.TrimSpace(p.ProgramArguments)
	// code and environment as a command job's, so that they read alike.
	part := jobdecode.JobDocument{"command": json.RawMessage(`"true"`)}
	for _, k := range []string{"code", "code_asset", "environment"} {
		if v, ok := m[k]; ok {
			part[k] = v
		}
	}
	js, err := job.DecodeAsCommandJob(part, field+".")
	if err != nil {
		return nil, err
	}
	return &Task{Code: js.Code, CodeAsset: js.CodeAsset, Environment: js.Environment}, nil
}

// NormalizeSettings puts a parallel job's settings in their canonical
// spelling before Validate: names and paths trimmed, logging_level in
// capitals (Azure's WARN is WARNING).
func NormalizeSettings(p *job.ParallelSpec) {
	if p == nil {
		return
	}
	p.InputData, p.AppendRowTo = canonicalRef(p.InputData, "inputs"), canonicalRef(p.AppendRowTo, "outputs")
	p.EntryScript, p.MiniBatchSize = strings.TrimSpace(p.EntryScript), strings.TrimSpace(p.MiniBatchSize)
	p.ProgramArguments = strings.TrimSpace(p.ProgramArguments)
	p.LoggingLevel = strings.ToUpper(strings.TrimSpace(p.LoggingLevel))
	if p.LoggingLevel == "WARN" {
		p.LoggingLevel = "WARNING"
	}
}

// canonicalRef writes ${{ inputs.x }} as ${{inputs.x}}, so that the
// driver and the ledger read one spelling; anything else is trimmed for
// Validate to judge.
func canonicalRef(s, ns string) string {
	if name, ok := ref(s, ns); ok {
		return "${{" + ns + "." + name + "}}"
	}
	return strings.TrimSpace(s)
}

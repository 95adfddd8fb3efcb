package armjob

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// parallelStepKeys are the keys of a pipeline's parallel step as
// azure-ai-ml 1.4.0 writes it (Parallel._to_rest_object: the node's keys,
// its settings in the YAML's snake_case, its task with code and
// environment as ARM ids, partition_keys as a JSON string).
var parallelStepKeys = []string{"type", "name", "_source", "comment", "componentId", "computeId", "inputs", "outputs", "display_name", "displayName",
	"description", "tags", "properties", "resources", "environment_variables", "environmentVariables", "identity",
	"task", "input_data", "mini_batch_size", "max_concurrency_per_instance", "error_threshold", "mini_batch_error_threshold",
	"retry_settings", "logging_level", "partition_keys"}

// parallelSettingKeys are copied into the YAML's step as written: the
// pipeline decoder checks them, naming jobs.<step>.<key>.
var parallelSettingKeys = []string{"input_data", "mini_batch_size", "max_concurrency_per_instance", "error_threshold",
	"mini_batch_error_threshold", "retry_settings", "logging_level"}

// parallelStep turns a pipeline's parallel step (parallel_run_function
// in a @dsl.pipeline) into the YAML's. azure-ai-ml writes the parallel
// component's task and settings on the node itself, so the step is read
// as an inline parallel step: its task's code the code version's
// artifact, its environment a reference; componentId (the anonymous
// component the SDK registered, with the same task) is then not needed.
// A node without a task runs its component, which has the settings.
func (t jobTranslator) parallelStep(o obj) (doc, error) {
	if err := o.checkKeys("a pipeline's parallel step", parallelStepKeys...); err != nil {
		return nil, err
	}
	d := doc{"type": "parallel"}
	if err := t.stepCommon(o, d); err != nil {
		return nil, err
	}
	if !o.has("task") {
		c, err := o.str("componentId")
		if err != nil {
			return nil, err
		}
		if c == "" || strings.HasPrefix(c, InlineComponentPrefix) {
			return nil, core.FieldErrorf(o.field("task"), "is required: a parallel step's task {type: run_function, code, entry_script, environment}, or componentId naming a registered parallel component")
		}
		if d["component"], err = assetRef(o.field("componentId"), t.ws, "components", c); err != nil {
			return nil, err
		}
	} else {
		task, err := t.parallelTask(o)
		if err != nil {
			return nil, err
		}
		d["task"] = task
	}
	// Copied beside a component too: the pipeline's decoder refuses
	// them there, naming them, rather than Shoal dropping them.
	for _, k := range parallelSettingKeys {
		if v := o.raw(k); v != nil {
			d[k] = v
		}
	}
	if v := o.raw("partition_keys"); v != nil {
		keys, err := partitionKeys(o.field("partition_keys"), v)
		if err != nil {
			return nil, err
		}
		d["partition_keys"] = keys
	}
	vars, err := o.strMap("environmentVariables", "environment_variables")
	if err != nil {
		return nil, err
	}
	if len(vars) > 0 {
		d["environment_variables"] = vars
	}
	if o.has("resources") {
		res, err := resourcesDoc(o)
		if err != nil {
			return nil, err
		}
		if len(res) > 0 {
			d["resources"] = res
		}
	}
	if err := t.stepIO(o, d); err != nil {
		return nil, err
	}
	return d, nil
}

// parallelTask reads a parallel step's task: code (a code version's ARM
// id, as azureml:<id>) packed as the server's artifact, environment a
// reference, the rest as written.
func (t jobTranslator) parallelTask(o obj) (doc, error) {
	task, err := o.sub("task")
	if err != nil {
		return nil, err
	}
	if err := task.checkKeys("a parallel step's task", "type", "code", "entry_script", "environment", "program_arguments", "append_row_to", "model"); err != nil {
		return nil, err
	}
	d := doc{}
	for _, k := range []string{"type", "entry_script", "program_arguments", "append_row_to", "model"} {
		s, err := task.str(k)
		if err != nil {
			return nil, err
		}
		d.setStr(k, s)
	}
	if code, err := task.str("code"); err != nil {
		return nil, err
	} else if code != "" {
		if t.codes == nil {
			return nil, core.Errorf(core.ENOTIMPLEMENTED, "%s: this server does not keep Azure code assets yet; submit the pipeline with `shoal job create -f pipeline.yml`, which uploads the code itself", task.field("code"))
		}
		a, err := t.codes.CodeArtifact(t.ctx, t.ws, strings.TrimPrefix(code, "azureml:"))
		if err != nil {
			if core.ErrorField(err) == "" {
				return nil, &core.Error{Code: core.ErrorCode(err), Field: task.field("code"), Message: task.field("code") + ": " + core.ErrorMessage(err)}
			}
			return nil, err
		}
		d["code"] = a
	}
	switch env := task.raw("environment"); jobdecode.JSONKind(env) {
	case 0, 'n':
	case '"':
		s, _ := task.str("environment")
		ref, err := assetRef(task.field("environment"), t.ws, "environments", s)
		if err != nil {
			return nil, err
		}
		d["environment"] = ref
	default:
		d["environment"] = env // an inline environment, checked as a job's
	}
	return d, nil
}

// partitionKeys reads partition_keys, which azure-ai-ml sends as a JSON
// string of a list (json.dumps) and the YAML writes as a list.
func partitionKeys(field string, v json.RawMessage) ([]string, error) {
	if jobdecode.JSONKind(v) == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, core.FieldErrorf(field, "must be a list of column names")
		}
		v = json.RawMessage(s)
	}
	var keys []string
	if err := json.Unmarshal(v, &keys); err != nil {
		return nil, core.FieldErrorf(field, "must be a list of column names (or that list as JSON text), got %s", core.Short(string(v)))
	}
	return keys, nil
}

// parallelStepProps makes a pipeline step's answer d a parallel step's,
// as azure-ai-ml reads one back (Parallel._from_rest_object): type
// parallel, its task (code and environment left out: Shoal's artifact
// is no code version the SDK could resolve) and settings in the YAML's
// keys, partition_keys as the JSON text the SDK sends.
func parallelStepProps(st *job.PipelineStep, d map[string]any) {
	d["type"] = job.JobTypeParallel
	if st.Component == nil || st.Component.Parallel == nil {
		return // a registered component's step: its settings are the component's
	}
	p := st.Component.Parallel
	task := map[string]any{"type": "run_function", "entry_script": p.EntryScript}
	setNonEmpty(task, "program_arguments", p.ProgramArguments)
	setNonEmpty(task, "append_row_to", p.AppendRowTo)
	d["task"] = task
	d["input_data"] = p.InputData
	setNonEmpty(d, "mini_batch_size", p.MiniBatchSize)
	setNonEmpty(d, "logging_level", p.LoggingLevel)
	d["max_concurrency_per_instance"] = p.Concurrency()
	d["error_threshold"] = job.Threshold(p.ErrorThreshold)
	d["mini_batch_error_threshold"] = job.Threshold(p.MiniBatchErrorThreshold)
	d["retry_settings"] = map[string]any{"max_retries": p.MaxRetries(), "timeout": p.TimeoutSeconds()}
	if len(p.PartitionKeys) > 0 {
		if b, err := json.Marshal(p.PartitionKeys); err == nil {
			d["partition_keys"] = string(b)
		}
	}
	if st.Resources != nil && st.Resources.InstanceCount > 0 {
		d["resources"] = map[string]any{"instance_count": st.Resources.InstanceCount}
	}
}

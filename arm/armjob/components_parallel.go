package armjob

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// ParallelComponentSpec prepares a parallel component's componentSpec as
// azure-ai-ml 1.4.0 sends it (parallel_run_function, registered before
// its pipeline) for the YAML's decoder: task.code, a code version's ARM
// id, becomes the artifact of its files (task.code_asset the version),
// task.environment an azureml:<name>:<version>
// reference, and partition_keys, which the SDK sends as JSON text, a
// list. A spec of any other type is left as it is. field is the spec's
// path in the body (properties.componentSpec.), named by errors.
func ParallelComponentSpec(ctx context.Context, codes CodeResolver, workspace, field string, spec map[string]json.RawMessage) error {
	var typ string
	if json.Unmarshal(spec["type"], &typ) != nil || !strings.EqualFold(strings.TrimSpace(typ), "parallel") {
		return nil
	}
	var keys string
	if json.Unmarshal(spec["partition_keys"], &keys) == nil && strings.HasPrefix(strings.TrimSpace(keys), "[") {
		spec["partition_keys"] = json.RawMessage(keys)
	}
	var task map[string]json.RawMessage
	if json.Unmarshal(spec["task"], &task) != nil || task == nil {
		return nil
	}
	var code, env string
	if json.Unmarshal(task["code"], &code) == nil && codes != nil {
		if _, _, ok := CodeVersionOf(strings.TrimPrefix(code, "azureml:")); ok {
			a, err := codes.CodeArtifact(ctx, workspace, strings.TrimPrefix(code, "azureml:"))
			if err != nil {
				f := field + "task.code"
				return &core.Error{Code: core.ErrorCode(err), Field: f, Message: f + ": " + core.ErrorMessage(err)}
			}
			task["code"], _ = json.Marshal(a)
			// The version is kept, as a command component's is: the SDK
			// reads the component back naming it, never Shoal's artifact.
			name, version, _ := CodeVersionOf(code)
			task["code_asset"], _ = json.Marshal(name + ":" + version)
		}
	}
	if json.Unmarshal(task["environment"], &env) == nil {
		if ref, err := assetRef(field+"task.environment", workspace, "environments", env); err != nil {
			return err
		} else if ref != "" {
			task["environment"], _ = json.Marshal(ref)
		}
	}
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	spec["task"] = b
	return nil
}

// ParallelSpecShown writes a parallel component's shown document (doc,
// job.Component's JSON, code already as the SDK reads it) in Azure's
// parallelComponent shape: its task (type, code, environment,
// entry_script, program_arguments, append_row_to) and settings at the
// top, as the component version's PUT reads them back, instead of Shoal's
// command and parallel keys.
func ParallelSpecShown(doc []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil || m["parallel"] == nil {
		return doc
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(m["parallel"], &p) != nil {
		return doc
	}
	task := map[string]json.RawMessage{"type": json.RawMessage(`"run_function"`)}
	for _, k := range []string{"code", "environment"} {
		if v, ok := m[k]; ok {
			task[k] = v
		}
	}
	for _, k := range []string{"entry_script", "program_arguments", "append_row_to"} {
		if v, ok := p[k]; ok {
			task[k] = v
		}
	}
	for _, k := range []string{"command", "code", "environment", "parallel"} {
		delete(m, k)
	}
	for _, k := range []string{"input_data", "mini_batch_size", "max_concurrency_per_instance", "mini_batch_error_threshold",
		"error_threshold", "retry_settings", "logging_level", "partition_keys"} {
		if v, ok := p[k]; ok {
			m[k] = v
		}
	}
	var err error
	if m["task"], err = json.Marshal(task); err != nil {
		return doc
	}
	out, err := json.Marshal(m)
	if err != nil {
		return doc
	}
	return out
}

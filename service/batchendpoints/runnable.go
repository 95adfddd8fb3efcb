package batchendpoints

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// deploymentFields names, in a deployment's YAML, the parallel job's
// fields that a deployment's own keys become (batch.InvocationJob).
var deploymentFields = map[string]string{
	"task.entry_script": "code_configuration.scoring_script",
	"append_row_file":   "settings.output_file_name",
}

// settingKeys are the parallel job's keys a deployment writes under
// settings, as they are.
var settingKeys = map[string]bool{
	"mini_batch_size": true, "max_concurrency_per_instance": true, "mini_batch_error_threshold": true,
	"error_threshold": true, "logging_level": true, "retry_settings": true,
}

// checkRunnable applies to an invocation's job every rule a parallel job
// has (paralleljob.Validate: the scoring script a .py file on one line,
// the output file name a file name, concurrency, retries and timeout in
// range), so that a deployment is refused when it is created rather than
// stored for every invoke to fail on. Errors name the deployment's keys.
func checkRunnable(trial *job.JobSpec) error {
	err := paralleljob.Validate(trial)
	ce, ok := err.(*core.Error)
	if !ok || ce.Field == "" {
		return err
	}
	field, ok := deploymentFields[ce.Field]
	if top, _, _ := strings.Cut(ce.Field, "."); !ok && settingKeys[top] {
		field, ok = "settings."+ce.Field, true
	}
	if !ok {
		return err
	}
	return &core.Error{Code: ce.Code, Field: field, Message: field + ": " + strings.TrimPrefix(ce.Message, ce.Field+": ")}
}

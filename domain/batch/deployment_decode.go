package batch

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// settingKeys are the parallel settings, under settings: or (older
// files, azure-ai-ml 1.4.0's own) at the top level.
var settingKeys = []string{"max_concurrency_per_instance", "mini_batch_size", "output_action", "output_file_name",
	"retry_settings", "error_threshold", "mini_batch_error_threshold", "logging_level", "environment_variables"}

// deploymentKeys are a batch deployment document's keys.
var deploymentKeys = append([]string{"name", "endpoint_name", "description", "tags", "type", "model",
	"code_configuration", "environment", "compute", "resources", "settings", "job_definition", "component"}, settingKeys...)

// DecodeDeployment decodes and validates a batch deployment document.
func DecodeDeployment(data []byte) (*Deployment, error) {
	d, err := parse(data, "", "batch deployment", deploymentKeys)
	if err != nil {
		return nil, err
	}
	dep := &Deployment{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &dep.Name}, {"endpoint_name", &dep.EndpointName}, {"description", &dep.Description}, {"type", &dep.Type}, {"compute", &dep.Compute}} {
		if *f.dst, err = str(d[f.key], f.key); err != nil {
			return nil, err
		}
	}
	dep.Type = strings.ToLower(dep.Type)
	if dep.Type == TypePipeline || !isNull(d["job_definition"]) || !isNull(d["component"]) {
		return nil, core.FieldErrorf("type", "pipeline deployments are not supported by Shoal: deploy a model (type: model, a registered model and a scoring_script); run a pipeline as a pipeline job")
	}
	if dep.Tags, err = core.DecodeTags(d["tags"]); err != nil {
		return nil, err
	}
	if dep.Model, err = decodeModel(d["model"]); err != nil {
		return nil, err
	}
	if !isNull(d["code_configuration"]) {
		cc, err := parse(d["code_configuration"], "code_configuration.", "code configuration", []string{"code", "scoring_script"})
		if err != nil {
			return nil, err
		}
		if dep.CodeConfiguration.Code, err = str(cc["code"], "code_configuration.code"); err != nil {
			return nil, err
		}
		if dep.CodeConfiguration.ScoringScript, err = str(cc["scoring_script"], "code_configuration.scoring_script"); err != nil {
			return nil, err
		}
	}
	if !isNull(d["environment"]) {
		if err := json.Unmarshal(d["environment"], &dep.Environment); err != nil {
			return nil, core.FieldErrorf("environment", "must be a reference (azureml:<name>:<version>) or a mapping")
		}
	}
	if !isNull(d["resources"]) {
		r, err := parse(d["resources"], "resources.", "deployment's resources", []string{"instance_count", "instance_type", "properties"})
		if err != nil {
			return nil, err
		}
		n, err := integer(r["instance_count"], "resources.instance_count")
		if err != nil {
			return nil, err
		}
		dep.Resources = &job.JobResources{}
		if n != nil {
			dep.Resources.InstanceCount = *n
		}
		if dep.Resources.InstanceType, err = str(r["instance_type"], "resources.instance_type"); err != nil {
			return nil, err
		}
	}
	// Top-level settings first, then settings: over them.
	if err := decodeSettings(d, "", dep); err != nil {
		return nil, err
	}
	if !isNull(d["settings"]) {
		s, err := parse(d["settings"], "settings.", "deployment's settings", settingKeys)
		if err != nil {
			return nil, err
		}
		if err := decodeSettings(s, "settings.", dep); err != nil {
			return nil, err
		}
	}
	return dep, ValidateDeployment(dep)
}

// decodeModel reads model: a reference string, or a mapping naming a
// registered version; a mapping with a local path is a model to register
// first (Shoal registers models with `shoal model create`).
func decodeModel(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	if s, err := str(raw, "model"); err == nil {
		return s, nil
	}
	m, err := parse(raw, "model.", "model", []string{"name", "version", "path", "type", "description", "tags"})
	if err != nil {
		return "", err
	}
	name, err := str(m["name"], "model.name")
	if err != nil {
		return "", err
	}
	if !isNull(m["path"]) {
		return "", core.FieldErrorf("model.path", "an inline model is not registered by a deployment here: register it first (shoal model create --name %s --path <folder>) and write model: azureml:%s@latest", orPlaceholder(name), orPlaceholder(name))
	}
	version, err := numberOrString(m["version"], "model.version")
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", core.FieldErrorf("model.name", "is required")
	}
	if version == "" {
		return "azureml:" + name + "@latest", nil
	}
	return "azureml:" + name + ":" + version, nil
}

func orPlaceholder(s string) string {
	if s == "" {
		return "<name>"
	}
	return s
}

// decodeSettings reads the parallel settings found in d (prefix is d's
// path) into dep.Settings, leaving absent ones as they are.
func decodeSettings(d doc, prefix string, dep *Deployment) error {
	s := &dep.Settings
	if n, err := integer(d["max_concurrency_per_instance"], prefix+"max_concurrency_per_instance"); err != nil {
		return err
	} else if n != nil {
		s.MaxConcurrencyPerInstance = *n
		if *n < 1 {
			return core.FieldErrorf(prefix+"max_concurrency_per_instance", "must be at least 1, got %d", *n)
		}
	}
	if v, err := numberOrString(d["mini_batch_size"], prefix+"mini_batch_size"); err != nil {
		return err
	} else if v != "" {
		s.MiniBatchSize = v
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"output_action", &s.OutputAction}, {"output_file_name", &s.OutputFileName}, {"logging_level", &s.LoggingLevel}} {
		v, err := str(d[f.key], prefix+f.key)
		if err != nil {
			return err
		}
		if v != "" {
			*f.dst = v
		}
	}
	for _, f := range []struct {
		key string
		dst **int
	}{{"error_threshold", &s.ErrorThreshold}, {"mini_batch_error_threshold", &s.MiniBatchErrorThreshold}} {
		n, err := integer(d[f.key], prefix+f.key)
		if err != nil {
			return err
		}
		if n != nil {
			*f.dst = n
		}
	}
	if !isNull(d["retry_settings"]) {
		r, err := parse(d["retry_settings"], prefix+"retry_settings.", "retry_settings", []string{"max_retries", "timeout"})
		if err != nil {
			return err
		}
		s.Retry = &job.ParallelRetry{}
		if s.Retry.MaxRetries, err = integer(r["max_retries"], prefix+"retry_settings.max_retries"); err != nil {
			return err
		}
		t, err := integer(r["timeout"], prefix+"retry_settings.timeout")
		if err != nil {
			return err
		}
		if t != nil {
			s.Retry.Timeout = *t
		}
	}
	if !isNull(d["environment_variables"]) {
		m, err := stringMap(d["environment_variables"], prefix+"environment_variables")
		if err != nil {
			return err
		}
		if dep.EnvironmentVariables == nil {
			dep.EnvironmentVariables = map[string]string{}
		}
		for k, v := range m {
			dep.EnvironmentVariables[k] = v
		}
	}
	return nil
}

// logLevels are Python's logging levels, as settings.logging_level
// takes them (any case).
var logLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// ValidateDeployment checks a deployment's fields and puts enumerations
// in their canonical spelling. The model, code, environment and compute
// are checked against the store by the service.
func ValidateDeployment(d *Deployment) error {
	if err := ValidateName("name", d.Name); err != nil {
		return err
	}
	if err := ValidateName("endpoint_name", d.EndpointName); err != nil {
		return err
	}
	switch d.Type {
	case "":
		d.Type = TypeModel
	case TypeModel:
	default:
		return core.FieldErrorf("type", "%q: a batch deployment here is type: model", core.Short(d.Type))
	}
	if d.Model == "" {
		return core.FieldErrorf("model", "is required: the registered model to score with (azureml:<name>:<version> or azureml:<name>@latest)")
	}
	if !strings.HasPrefix(d.Model, "azureml:") {
		return core.FieldErrorf("model", "%q: name a registered model (azureml:<name>:<version> or azureml:<name>@latest)", core.Short(d.Model))
	}
	cc := &d.CodeConfiguration
	if cc.Code == "" {
		return core.FieldErrorf("code_configuration.code", "is required: the folder that holds the scoring script")
	}
	if cc.ScoringScript == "" {
		return core.FieldErrorf("code_configuration.scoring_script", "is required: the file of the code folder that defines init() and run(mini_batch)")
	}
	if p := path.Clean(strings.ReplaceAll(cc.ScoringScript, "\\", "/")); path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return core.FieldErrorf("code_configuration.scoring_script", "%q must be a relative path inside the code folder", core.Short(cc.ScoringScript))
	}
	if d.Compute == "" {
		return core.FieldErrorf("compute", "is required: the compute cluster the invocations' jobs run on")
	}
	if d.Resources != nil && d.Resources.InstanceCount < 0 {
		return core.FieldErrorf("resources.instance_count", "must be at least 1")
	}
	return validateSettings(&d.Settings)
}

func validateSettings(s *Settings) error {
	if _, err := job.ParseMiniBatchSize(s.MiniBatchSize, false); err != nil {
		if _, terr := job.ParseMiniBatchSize(s.MiniBatchSize, true); terr != nil {
			return core.FieldErrorf("settings.mini_batch_size", "%v", err)
		}
	}
	switch strings.ToLower(s.OutputAction) {
	case "", "appendrow", OutputAppendRow:
		s.OutputAction = OutputAppendRow
	case "summaryonly", OutputSummaryOnly:
		s.OutputAction = OutputSummaryOnly
	default:
		return core.FieldErrorf("settings.output_action", "%q must be append_row or summary_only", core.Short(s.OutputAction))
	}
	if s.OutputAction == OutputAppendRow && s.OutputFileName == "" {
		s.OutputFileName = DefaultOutputFileName
	}
	if f := s.OutputFileName; f != "" && (strings.ContainsAny(f, "/\\") || f == "." || f == ".." || strings.ContainsRune(f, 0)) {
		return core.FieldErrorf("settings.output_file_name", "%q must be a file name, without a folder", core.Short(f))
	}
	for _, t := range []struct {
		key string
		v   *int
	}{{"settings.error_threshold", s.ErrorThreshold}, {"settings.mini_batch_error_threshold", s.MiniBatchErrorThreshold}} {
		if t.v != nil && *t.v < -1 {
			return core.FieldErrorf(t.key, "must be -1 (no limit) or more, got %d", *t.v)
		}
	}
	if r := s.Retry; r != nil {
		if r.MaxRetries != nil && *r.MaxRetries < 0 {
			return core.FieldErrorf("settings.retry_settings.max_retries", "must be 0 or more, got %d", *r.MaxRetries)
		}
		if r.Timeout < 0 {
			return core.FieldErrorf("settings.retry_settings.timeout", "must be a number of seconds, at least 1")
		}
	}
	if s.LoggingLevel != "" {
		up := strings.ToUpper(s.LoggingLevel)
		ok := false
		for _, l := range logLevels {
			ok = ok || l == up
		}
		if !ok {
			return core.FieldErrorf("settings.logging_level", "%q must be one of %s", core.Short(s.LoggingLevel), strings.Join(logLevels, ", "))
		}
		s.LoggingLevel = up
	}
	return nil
}

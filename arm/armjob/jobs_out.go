package armjob

import (
	"fmt"
	"github.com/shoal-ml/shoal/arm/armcore"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
)

// JobResourceType is a job's ARM resource type.
const JobResourceType = "Microsoft.MachineLearningServices/workspaces/jobs"

// JobResource is Azure's JobBase resource as Shoal answers it: what
// azure-ai-ml's Job._from_rest_object reads.
type JobResource struct {
	ID         string              `json:"id"`
	Name       string              `json:"name"`
	Type       string              `json:"type"`
	SystemData *armcore.SystemData `json:"systemData,omitempty"`
	Properties map[string]any      `json:"properties"`
}

// restModes are the YAML's input and output modes as Azure's REST
// spells them.
var restModes = map[string]string{
	"ro_mount": "ReadOnlyMount", "rw_mount": "ReadWriteMount", "download": "Download", "direct": "Direct",
	"eval_mount": "EvalMount", "eval_download": "EvalDownload", "upload": "Upload",
}

// jobStatus is a job's status as Azure's REST names it. Shoal's statuses
// are Azure's names already; one Azure does not know would make the SDK
// choke, so it is answered as the nearest: Unknown.
func jobStatus(s string) string {
	switch s {
	case job.JobNotStarted, job.JobQueued, job.JobPreparing, job.JobRunning, job.JobFinalizing,
		job.JobCancelRequested, job.JobCompleted, job.JobFailed, job.JobCanceled,
		"Provisioning", "Starting", "NotResponding", "Paused":
		return s
	}
	return "Unknown"
}

// ToJobResource is a stored job as Azure's REST answers it, in scope,
// with services that are never null: Studio (the job's page in Shoal's
// studio, on publicURL) and Tracking (its MLflow tracking URI), as
// azure-ai-ml's stream and show read them.
func ToJobResource(scope armcore.Scope, publicURL string, j *job.Job) *JobResource {
	wsID := scope.WorkspaceID(j.Workspace)
	p := map[string]any{
		"displayName": orDefault(j.DisplayName, j.Name), "experimentName": orDefault(j.ExperimentName, "Default"),
		"description": j.Description, "tags": nonNilTags(j.Tags), "properties": map[string]string{},
		"status": jobStatus(j.Status), "isArchived": false, "services": jobServices(publicURL, j),
	}
	switch {
	case j.Pipeline != nil:
		p["jobType"] = "Pipeline"
		pipelineProps(wsID, j.Name, j.Pipeline, p)
	case j.Sweep != nil:
		p["jobType"] = "Sweep"
		sweepProps(wsID, j.Sweep, p)
		if j.BestChildRunID != "" {
			// azure-ai-ml's jobs.download of a sweep downloads this
			// trial's outputs (SWEEP_JOB_BEST_CHILD_RUN_ID_PROPERTY_NAME).
			p["properties"] = map[string]string{"best_child_run_id": j.BestChildRunID}
		}
	default:
		p["jobType"] = "Command"
		commandProps(wsID, &j.JobSpec, p)
		p["parameters"] = map[string]any{}
	}
	parallelProperties(j, p)
	if ns := notificationSettingREST(j); ns != nil {
		p["notificationSetting"] = ns
	}
	return &JobResource{
		ID: wsID + "/jobs/" + j.Name, Name: j.Name, Type: JobResourceType,
		SystemData: &armcore.SystemData{CreatedAt: j.CreatedOn.UTC(), CreatedBy: j.CreatedBy},
		Properties: p,
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func nonNilTags(t map[string]string) map[string]string {
	if t == nil {
		return map[string]string{}
	}
	return t
}

// jobServices are the services Azure answers for every job (Studio,
// Tracking) and the job's own.
func jobServices(publicURL string, j *job.Job) map[string]any {
	base := strings.TrimSuffix(publicURL, "/")
	out := map[string]any{
		"Studio": map[string]any{"jobServiceType": "Studio",
			"endpoint": base + "/jobs/" + url.PathEscape(j.Name) + "?workspace=" + url.QueryEscape(j.Workspace)},
		"Tracking": map[string]any{"jobServiceType": "Tracking",
			"endpoint": base + "/mlflow/v1/workspaces/" + url.PathEscape(j.Workspace)},
	}
	addJobServices(out, j)
	return out
}

// computeID is the ARM id of a compute a job document names (empty:
// none).
func computeID(wsID, c string) string {
	c = strings.TrimPrefix(strings.TrimSpace(c), "azureml:")
	if c == "" {
		return ""
	}
	return wsID + "/computes/" + c
}

// AssetID is the ARM id of azureml:<name>:<version> in collection; other
// references (@latest, registries, an artifact) are answered as written.
func AssetID(wsID, collection, ref string) string {
	rest, ok := strings.CutPrefix(ref, "azureml:")
	if !ok || strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "//") {
		return ref
	}
	if name, version, ok := strings.Cut(rest, ":"); ok && !strings.Contains(version, ":") {
		return wsID + "/" + collection + "/" + name + "/versions/" + version
	}
	return ref
}

// setNonEmpty sets k in p when v is not empty.
func setNonEmpty(p map[string]any, k, v string) {
	if v != "" {
		p[k] = v
	}
}

// trialProps are the properties a command job and a sweep's trial share.
func trialProps(wsID, command, code string, env any, vars map[string]string, res *job.JobResources, dist *job.Distribution, p map[string]any) {
	p["command"] = command
	setNonEmpty(p, "codeId", AssetID(wsID, "codes", code))
	if s, ok := env.(string); ok {
		p["environmentId"] = AssetID(wsID, "environments", s)
	}
	if vars == nil {
		vars = map[string]string{}
	}
	p["environmentVariables"] = vars
	if res != nil {
		r := map[string]any{"properties": map[string]any{}}
		if res.InstanceCount > 0 {
			r["instanceCount"] = res.InstanceCount
		}
		setNonEmpty(r, "instanceType", res.InstanceType)
		setNonEmpty(r, "shmSize", res.ShmSize)
		p["resources"] = r
	}
	if dist != nil {
		d := map[string]any{"distributionType": map[string]string{job.DistributionPyTorch: "PyTorch", job.DistributionMPI: "Mpi", job.DistributionTensorFlow: "TensorFlow"}[dist.Type]}
		if dist.ProcessCountPerInstance > 0 {
			d["processCountPerInstance"] = dist.ProcessCountPerInstance
		}
		p["distribution"] = d
	}
}

// commandProps are a command job's properties.
func commandProps(wsID string, s *job.JobSpec, p map[string]any) {
	trialProps(wsID, s.Command, codeShown(s.Code, s.CodeAsset), s.Environment, s.EnvironmentVariables, s.Resources, s.Distribution, p)
	setNonEmpty(p, "computeId", computeID(wsID, s.Compute))
	p["inputs"] = inputsProps(s.Inputs)
	p["outputs"] = outputsProps(s.Outputs)
	if s.Limits != nil && s.Limits.Timeout > 0 {
		p["limits"] = map[string]any{"jobLimitsType": "Command", "timeout": armcore.FormatSeconds(s.Limits.Timeout)}
	}
}

// literal is a literal input's value as REST's string.
func literal(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func inputsProps(in map[string]*job.JobInput) map[string]any {
	out := map[string]any{}
	for name, i := range in {
		if i == nil {
			continue
		}
		if i.Type == "" || i.Value != nil {
			out[name] = map[string]any{"jobInputType": "literal", "value": literal(i.Value)}
			continue
		}
		m := map[string]any{"jobInputType": i.Type, "uri": i.Path}
		setNonEmpty(m, "mode", restModes[i.Mode])
		out[name] = m
	}
	return out
}

func outputsProps(outs map[string]*job.JobOutput) map[string]any {
	out := map[string]any{}
	for name, o := range outs {
		if o == nil {
			continue
		}
		m := map[string]any{"jobOutputType": orDefault(o.Type, "uri_folder")}
		setNonEmpty(m, "uri", o.Path)
		setNonEmpty(m, "mode", restModes[o.Mode])
		setNonEmpty(m, "assetName", o.Name)
		setNonEmpty(m, "assetVersion", o.Version)
		out[name] = m
	}
	return out
}

// sweepProps are a sweep job's properties.
func sweepProps(wsID string, s *job.SweepSpec, p map[string]any) {
	setNonEmpty(p, "computeId", computeID(wsID, s.Compute))
	p["inputs"] = inputsProps(s.Inputs)
	p["outputs"] = outputsProps(s.Outputs)
	if t := s.Trial; t != nil {
		trial := map[string]any{}
		trialProps(wsID, t.Command, codeShown(t.Code, t.CodeAsset), t.Environment, t.EnvironmentVariables, t.Resources, t.Distribution, trial)
		p["trial"] = trial
	}
	space := map[string]any{}
	for name, sp := range s.SearchSpace {
		space[name] = searchParamREST(sp)
	}
	p["searchSpace"] = space
	if a := s.SamplingAlgorithm; a != nil {
		m := map[string]any{"samplingAlgorithmType": capitalize(a.Type)}
		if a.Seed != nil {
			m["seed"] = *a.Seed
		}
		if a.Rule != "" {
			m["rule"] = capitalize(a.Rule)
		}
		p["samplingAlgorithm"] = m
	}
	if o := s.Objective; o != nil {
		p["objective"] = map[string]any{"primaryMetric": o.PrimaryMetric, "goal": strings.ToLower(o.Goal)}
	}
	l := map[string]any{"jobLimitsType": "Sweep"}
	if s.Limits != nil {
		for k, v := range map[string]int{"maxTotalTrials": s.Limits.MaxTotalTrials, "maxConcurrentTrials": s.Limits.MaxConcurrentTrials} {
			if v > 0 {
				l[k] = v
			}
		}
		if s.Limits.Timeout > 0 {
			l["timeout"] = armcore.FormatSeconds(s.Limits.Timeout)
		}
		if s.Limits.TrialTimeout > 0 {
			l["trialTimeout"] = armcore.FormatSeconds(s.Limits.TrialTimeout)
		}
	}
	p["limits"] = l
	if e := s.EarlyTermination; e != nil {
		m := map[string]any{"policyType": map[string]string{job.PolicyBandit: "Bandit", job.PolicyMedianStopping: "MedianStopping",
			job.PolicyTruncationSelection: "TruncationSelection"}[e.Type], "evaluationInterval": e.EvaluationInterval, "delayEvaluation": e.DelayEvaluation}
		if e.SlackFactor != nil {
			m["slackFactor"] = *e.SlackFactor
		}
		if e.SlackAmount != nil {
			m["slackAmount"] = *e.SlackAmount
		}
		if e.TruncationPercentage > 0 {
			m["truncationPercentage"] = e.TruncationPercentage
		}
		p["earlyTermination"] = m
	}
}

// capitalize is an enum's REST spelling (random: Random).
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// searchParamREST is a hyperparameter's distribution in REST's
// [type, [args]] form, the inverse of searchSpaceDoc.
func searchParamREST(sp *job.SearchParam) []any {
	if sp == nil {
		return nil
	}
	if sp.Type == "choice" {
		return []any{"choice", []any{sp.Values}}
	}
	var args []any
	for _, k := range searchArgs[sp.Type] {
		switch k {
		case "upper":
			if sp.Upper != nil {
				args = append(args, *sp.Upper)
			}
		case "min_value":
			args = appendF(args, sp.MinValue)
		case "max_value":
			args = appendF(args, sp.MaxValue)
		case "mu":
			args = appendF(args, sp.Mu)
		case "sigma":
			args = appendF(args, sp.Sigma)
		case "q":
			args = appendF(args, sp.Q)
		}
	}
	return []any{sp.Type, args}
}

func appendF(args []any, f *float64) []any {
	if f != nil {
		return append(args, *f)
	}
	return args
}

// InlineComponentPrefix starts the componentId Shoal answers for a
// pipeline's inline command step (command, code and environment written on
// the step, as the CLI's YAML allows): such a step has no registered
// component to name, and azure-ai-ml cannot read a step without a
// componentId. It is not an ARM id, and a PUT that names it is refused.
const InlineComponentPrefix = "inline:"

// pipelineProps are a pipeline job's properties (name is the pipeline
// job's): its steps as azure-ai-ml's BaseNode dicts.
func pipelineProps(wsID, name string, s *job.PipelineSpec, p map[string]any) {
	setNonEmpty(p, "computeId", computeID(wsID, s.Compute))
	p["inputs"] = inputsProps(s.Inputs)
	p["outputs"] = outputsProps(s.Outputs)
	settings := map[string]any{}
	setNonEmpty(settings, "default_compute", computeID(wsID, s.Settings.DefaultCompute))
	setNonEmpty(settings, "default_datastore", s.Settings.DefaultDatastore)
	if s.Settings.ContinueOnStepFailure {
		settings["continue_on_step_failure"] = true
	}
	for k, v := range s.Settings.Ignored {
		settings[k] = v // kept as written, as Azure keeps settings it does not know
	}
	p["settings"] = settings
	jobs := map[string]any{}
	for step, st := range s.Jobs {
		if st == nil {
			continue
		}
		d := map[string]any{"type": "command", "name": step, "tags": nonNilTags(st.Tags), "properties": map[string]string{}}
		setNonEmpty(d, "display_name", st.DisplayName)
		setNonEmpty(d, "description", st.Description)
		setNonEmpty(d, "computeId", computeID(wsID, st.Compute))
		if st.ComponentRef != "" {
			d["componentId"] = AssetID(wsID, "components", st.ComponentRef)
		} else {
			d["componentId"] = InlineComponentPrefix + name + "/" + step
		}
		if len(st.EnvironmentVariables) > 0 {
			d["environment_variables"] = st.EnvironmentVariables
		}
		in := map[string]any{}
		for k, v := range st.Inputs {
			switch {
			case v == nil:
			case v.Bind != "":
				in[k] = map[string]any{"job_input_type": "literal", "value": v.Bind}
			case v.Path != "":
				m := map[string]any{"job_input_type": orDefault(v.Type, "uri_folder"), "uri": v.Path}
				setNonEmpty(m, "mode", restModes[v.Mode])
				in[k] = m
			default:
				in[k] = map[string]any{"job_input_type": "literal", "value": literal(v.Value)}
			}
		}
		d["inputs"] = in
		out := map[string]any{}
		for k, v := range st.Outputs {
			switch {
			case v == nil:
			case v.Bind != "":
				out[k] = map[string]any{"type": "literal", "value": v.Bind}
			default:
				m := map[string]any{"job_output_type": orDefault(v.Type, "uri_folder")}
				setNonEmpty(m, "uri", v.Path)
				setNonEmpty(m, "mode", restModes[v.Mode])
				out[k] = m
			}
		}
		d["outputs"] = out
		if st.Sweep != nil {
			sweepStepProps(st, d)
		}
		if st.Type == job.JobTypeParallel {
			parallelStepProps(st, d)
		}
		jobs[step] = d
	}
	p["jobs"] = jobs
}

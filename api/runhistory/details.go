package runhistory

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

// RunDetails is run history's RunDetails as azure-ai-ml reads it while
// it streams a job: status, the log files (name → URL), warnings, the
// error of a failed run, times and target.
type RunDetails struct {
	RunID          string            `json:"runId"`
	ParentRunID    string            `json:"parentRunId,omitempty"`
	RootRunID      string            `json:"rootRunId"`
	Target         string            `json:"target,omitempty"`
	Status         string            `json:"status"`
	CreatedTimeUTC time.Time         `json:"createdTimeUtc"`
	StartTimeUTC   *time.Time        `json:"startTimeUtc,omitempty"`
	EndTimeUTC     *time.Time        `json:"endTimeUtc,omitempty"`
	Error          *ErrorResponse    `json:"error,omitempty"`
	Warnings       []Warning         `json:"warnings"`
	Tags           map[string]string `json:"tags"`
	Properties     map[string]string `json:"properties"`
	// LogFiles is never null: azure-ai-ml iterates it on every poll.
	LogFiles  map[string]string `json:"logFiles"`
	RunNumber int64             `json:"runNumber,omitempty"`
}

// Run is run history's Run as azure-ai-ml reads it for a pipeline's
// child job (jobs.get, jobs.list(parent_job_name=...)) and in run data.
type Run struct {
	RunID        string            `json:"runId"`
	Name         string            `json:"name"`
	DisplayName  string            `json:"displayName,omitempty"`
	Description  string            `json:"description,omitempty"`
	ParentRunID  string            `json:"parentRunId,omitempty"`
	RootRunID    string            `json:"rootRunId"`
	ExperimentID string            `json:"experimentId,omitempty"`
	Status       string            `json:"status"`
	CreatedUTC   time.Time         `json:"createdUtc"`
	CreatedBy    *User             `json:"createdBy,omitempty"`
	StartTimeUTC *time.Time        `json:"startTimeUtc,omitempty"`
	EndTimeUTC   *time.Time        `json:"endTimeUtc,omitempty"`
	Error        *ErrorResponse    `json:"error,omitempty"`
	Warnings     []Warning         `json:"warnings"`
	Target       string            `json:"target,omitempty"`
	Compute      *Compute          `json:"compute,omitempty"`
	Tags         map[string]string `json:"tags"`
	Properties   map[string]string `json:"properties"`
	RunNumber    int64             `json:"runNumber,omitempty"`
}

// User is who created a run.
type User struct {
	UserName string `json:"userName"`
}

// Compute is where a run ran.
type Compute struct {
	Target        string `json:"target"`
	InstanceCount int    `json:"instanceCount"`
}

// Warning is one of a run's warnings, printed in the stream's summary.
type Warning struct {
	Source  string `json:"source"`
	Message string `json:"message"`
}

// ErrorResponse is run history's error of a failed run.
type ErrorResponse struct {
	Error RootError `json:"error"`
}

// RootError names a failed run's error.
type RootError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Details is GET …/runs/{id}/details.
func (h *Handlers) Details(w http.ResponseWriter, r *http.Request) {
	j, err := h.findJob(r, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	attempts, err := h.cfg.Jobs.ListAttempts(r.Context(), j.Workspace, j.Name)
	if err != nil {
		writeError(w, err)
		return
	}
	d := RunDetails{
		RunID: j.Name, ParentRunID: j.ParentJobName, RootRunID: rootOf(j), Target: j.Compute, Status: j.Status,
		CreatedTimeUTC: j.CreatedOn.UTC(), StartTimeUTC: utc(j.StartTime), EndTimeUTC: utc(j.EndTime),
		Error: runError(j), Warnings: warnings(j, attempts), Tags: tagsOf(j), Properties: map[string]string{},
		LogFiles: h.logFiles(j, attempts), RunNumber: j.Seq,
	}
	writeJSON(w, http.StatusOK, d)
}

// Run is GET …/runs/{id}.
func (h *Handlers) Run(w http.ResponseWriter, r *http.Request) {
	j, err := h.findJob(r, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	run, err := h.run(r, j)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// Children is GET …/runs/{id}/children: a pipeline's steps' and a
// sweep's trials' jobs, in the order the parent recorded them; a command
// job has none.
func (h *Handlers) Children(w http.ResponseWriter, r *http.Request) {
	j, err := h.findJob(r, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	var names []string
	for _, s := range j.Steps {
		if s.Job != "" {
			names = append(names, s.Job)
		}
	}
	for _, t := range j.Trials {
		if t.Job != "" {
			names = append(names, t.Job)
		}
	}
	out := make([]*Run, 0, len(names))
	for _, name := range names {
		c, err := h.cfg.Jobs.FindJob(r.Context(), j.Workspace, name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue // recorded, not yet stored: it appears on the next read
		}
		if err != nil {
			writeError(w, err)
			return
		}
		run, err := h.run(r, c)
		if err != nil {
			writeError(w, err)
			return
		}
		out = append(out, run)
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": out})
}

// runDataRequest is the body of POST …/rundata.
type runDataRequest struct {
	RunID string `json:"runId"`
}

// RunData is POST …/rundata: the run's metadata. azure-ai-ml's
// jobs.download reads runMetadata.outputs for outputs registered as data
// assets or models; Shoal registers none, so it finds named outputs at
// their datastore paths (azureml/<job>/<output>/) instead.
func (h *Handlers) RunData(w http.ResponseWriter, r *http.Request) {
	var req runDataRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, core.FieldErrorf("body", "is not a run data request: %v", err))
		return
	}
	j, err := h.findJob(r, req.RunID)
	if err != nil {
		writeError(w, err)
		return
	}
	run, err := h.run(r, j)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runMetadata": run, "runDefinition": nil, "jobSpecification": nil})
}

// run is a job as run history's Run.
func (h *Handlers) run(r *http.Request, j *job.Job) (*Run, error) {
	attempts, err := h.cfg.Jobs.ListAttempts(r.Context(), j.Workspace, j.Name)
	if err != nil {
		return nil, err
	}
	run := &Run{
		RunID: j.Name, Name: j.Name, DisplayName: j.DisplayName, Description: j.Description, ParentRunID: j.ParentJobName,
		RootRunID: rootOf(j), ExperimentID: j.ExperimentName, Status: j.Status, CreatedUTC: j.CreatedOn.UTC(),
		StartTimeUTC: utc(j.StartTime), EndTimeUTC: utc(j.EndTime), Error: runError(j), Warnings: warnings(j, attempts),
		Target: j.Compute, Tags: tagsOf(j), Properties: map[string]string{}, RunNumber: j.Seq,
	}
	if run.ExperimentID == "" {
		run.ExperimentID = mlflowrun.DefaultExperiment // as its MLflow run's experiment
	}
	if j.CreatedBy != "" {
		run.CreatedBy = &User{UserName: j.CreatedBy}
	}
	if j.Compute != "" {
		run.Compute = &Compute{Target: j.Compute, InstanceCount: j.InstanceCount()}
	}
	return run, nil
}

// rootOf is the run at the top of j's family: its parent, or itself.
func rootOf(j *job.Job) string {
	if j.ParentJobName != "" {
		return j.ParentJobName
	}
	return j.Name
}

func tagsOf(j *job.Job) map[string]string {
	if j.Tags == nil {
		return map[string]string{}
	}
	return j.Tags
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// runError is a failed job's error as run history words it. The code is
// Azure's: UserError when the job's own command exited non-zero (what
// the user changes to fix it), SystemError otherwise.
func runError(j *job.Job) *ErrorResponse {
	if j.Status != job.JobFailed {
		return nil
	}
	code, msg := "SystemError", j.Error
	if j.ExitCode != nil && *j.ExitCode != 0 {
		code = "UserError"
		if msg == "" {
			msg = fmt.Sprintf("the job's command exited with code %d", *j.ExitCode)
		}
	}
	if msg == "" {
		msg = "the job failed; its log says why"
	}
	return &ErrorResponse{Error: RootError{Code: code, Message: msg}}
}

// warnings are the attempts that ended without ending the job (a
// preempted or lost node, a retried failure): the job ran again, which
// the stream's summary says, as Azure lists a run's warnings there.
func warnings(j *job.Job, attempts []*job.Attempt) []Warning {
	out := []Warning{}
	for _, w := range pipelinejob.IgnoredWarnings(j.Pipeline) {
		// What jobs.stream prints under "Warnings": Azure's own settings
		// keys Shoal kept, and inputs it dropped, without acting on them.
		out = append(out, Warning{Source: "shoal", Message: w})
	}
	for i, a := range attempts {
		if i == len(attempts)-1 || !job.AttemptTerminal(a.Status) {
			continue // the last attempt is the job's own outcome
		}
		msg := fmt.Sprintf("attempt %d ended %s", a.Number, a.Status)
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		out = append(out, Warning{Source: "shoal", Message: msg + "; the job ran again"})
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

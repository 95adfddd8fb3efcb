package arm

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// PutJob is PUT …/jobs/{name}: Azure's JobBase turned into the job
// document Shoal's one submit path takes (service.SubmitJobDocument, as
// `shoal job create` and the native API), 201 when it is new and 200 when
// the same job was already submitted under the name.
func (h Handlers) PutJob(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	ws, name := r.PathValue("ws"), r.PathValue("name")
	doc, err := armjob.JobDocument(r.Context(), ws, name, body, h.Codes)
	if err != nil {
		WriteError(w, err)
		return
	}
	j, created, err := h.Svc.SubmitJobDocument(r.Context(), ws, name, doc)
	if err != nil {
		WriteError(w, restJobError(err))
		return
	}
	status := createdStatus(created)
	writeJSON(w, status, armjob.ToJobResource(scopeOf(r), h.Svc.PublicURL(), j))
}

// GetJob is GET …/jobs/{name}.
func (h Handlers) GetJob(w http.ResponseWriter, r *http.Request) {
	j, err := h.Svc.FindJob(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, armjob.ToJobResource(scopeOf(r), h.Svc.PublicURL(), j))
}

// jobTypes are Azure's jobType filter values Shoal answers.
var jobTypes = map[string]func(*job.Job) bool{
	"command":  func(j *job.Job) bool { return j.Pipeline == nil && j.Sweep == nil },
	"pipeline": func(j *job.Job) bool { return j.Pipeline != nil },
	"sweep":    func(j *job.Job) bool { return j.Sweep != nil },
}

// ListJobs is GET …/jobs: the workspace's jobs newest first, without
// pipeline steps and sweep trials (Azure lists them under their parent),
// filtered by jobType, tag (a key, or key=value) and listViewType (no
// job is archived in Shoal: ArchivedOnly lists none), PageSize a page
// with a nextLink.
func (h Handlers) ListJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	keep := func(*job.Job) bool { return true }
	if t := q.Get("jobType"); t != "" {
		f, ok := jobTypes[strings.ToLower(t)]
		if !ok {
			WriteError(w, core.FieldErrorf("jobType", "%q is not Command, Pipeline or Sweep (the job types Shoal runs)", armcore.Short(t)))
			return
		}
		keep = f
	}
	_, show, err := listView(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	tagKey, tagValue, hasValue := strings.Cut(q.Get("tag"), "=")
	list, err := h.Svc.ListJobs(r.Context(), job.JobFilter{Workspace: r.PathValue("ws")})
	if err != nil {
		WriteError(w, err)
		return
	}
	list = slices.DeleteFunc(list, func(j *job.Job) bool {
		if j.ParentJobName != "" || !keep(j) || !show(false) {
			return true
		}
		if tagKey != "" {
			v, ok := j.Tags[tagKey]
			return !ok || (hasValue && v != tagValue)
		}
		return false
	})
	keys := make([]string, len(list))
	for i, j := range list {
		keys[i] = j.Name
	}
	carry := url.Values{"jobType": q["jobType"], "tag": q["tag"], "listViewType": q["listViewType"]}
	lo, hi, next, err := pageKeys(h.Svc.PublicURL(), r, keys, PageSize, carry)
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*armjob.JobResource, 0, hi-lo)
	for _, j := range list[lo:hi] {
		out = append(out, armjob.ToJobResource(scopeOf(r), h.Svc.PublicURL(), j))
	}
	writeList(w, out, next)
}

// CancelJob is POST …/jobs/{name}/cancel: 202, as Azure's long-running
// cancel answers (the SDK's poller ends on it); the job is Canceled once
// its nodes confirm, which GET …/jobs/{name} shows.
func (h Handlers) CancelJob(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Svc.CancelJob(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		WriteError(w, err)
		return
	}
	// A long-running operation as Azure's: Location names where its end
	// is told (CancelOperation), which begin_cancel(...).wait() polls.
	loc := operationURL(h.Svc.PublicURL(), r, strings.TrimSuffix(r.URL.Path, "/cancel"), "cancel")
	w.Header().Set("Location", loc)
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusAccepted)
}

// CancelOperation is GET …/jobs/{name}/operations/cancel, the cancel's
// Location: 202 (poll again) while the job has not ended, 200 once it
// has (Canceled, or whatever ended it first).
func (h Handlers) CancelOperation(w http.ResponseWriter, r *http.Request) {
	j, err := h.Svc.FindJob(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	if !job.JobTerminal(j.Status) {
		w.Header().Set("Location", operationURL(h.Svc.PublicURL(), r, strings.TrimSuffix(r.URL.Path, "/operations/cancel"), "cancel"))
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// DeleteJob is DELETE …/jobs/{name}: refused once the job is found.
// Shoal keeps every job (its history, logs, outputs and cost are what the
// workspace's records and budgets rest on).
func (h Handlers) DeleteJob(w http.ResponseWriter, r *http.Request) {
	j, err := h.Svc.FindJob(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err == nil {
		err = core.Errorf(core.EINVALID, "jobs are not deleted: Shoal keeps job %s with its logs, outputs and cost; cancel a job that is still running (POST …/jobs/%s/cancel, ml_client.jobs.begin_cancel)", j.Name, j.Name)
	}
	WriteError(w, err)
}

// restJobFields are the fields of a job document and the same fields in
// Azure's REST body, so that a refusal of the submit path names what the
// caller sent.
var restJobFields = []struct{ yaml, rest string }{
	{"compute", "properties.computeId"}, {"environment", "properties.environmentId"}, {"code", "properties.codeId"},
	{"command", "properties.command"}, {"environment_variables", "properties.environmentVariables"},
	{"display_name", "properties.displayName"}, {"experiment_name", "properties.experimentName"},
	{"inputs", "properties.inputs"}, {"outputs", "properties.outputs"}, {"resources", "properties.resources"},
	{"distribution", "properties.distribution"}, {"limits", "properties.limits"}, {"identity", "properties.identity"},
	{"services", "properties.services"}, {"trial", "properties.trial"}, {"search_space", "properties.searchSpace"},
	{"sampling_algorithm", "properties.samplingAlgorithm"}, {"objective", "properties.objective"},
	{"early_termination", "properties.earlyTermination"}, {"jobs", "properties.jobs"}, {"settings", "properties.settings"},
	{"tags", "properties.tags"}, {"description", "properties.description"},
}

// restJobError renames the field of an error of the submit path to its
// place in the REST body (compute: properties.computeId), keeping its
// code.
func restJobError(err error) error {
	f := core.ErrorField(err)
	if f == "" {
		return err
	}
	for _, m := range restJobFields {
		if f == m.yaml || strings.HasPrefix(f, m.yaml+".") {
			to := m.rest + strings.TrimPrefix(f, m.yaml)
			msg := core.ErrorMessage(err)
			if strings.HasPrefix(msg, f) {
				msg = to + strings.TrimPrefix(msg, f)
			} else {
				msg = to + ": " + msg
			}
			return &core.Error{Code: core.ErrorCode(err), Field: to, Message: msg}
		}
	}
	return err
}

// CodeResolver turns a job's codeId into the artifact of its code
// (armjob's; Handlers.Codes).
type CodeResolver = armjob.CodeResolver

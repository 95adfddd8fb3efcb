package arm

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/arm/armschedule"
	"github.com/shoal-ml/shoal/domain/identity"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/service/schedules"
)

// Job schedules (Azure's …/schedules; translation in arm/armschedule,
// the service is service/schedules, as `shoal schedule`'s).

// schedules is the schedules' service over the request services.
func (h Handlers) schedules() *schedules.Service { return schedules.Over(h.Svc) }

// ListJobSchedules is GET …/schedules: by name, filtered by listViewType
// (EnabledOnly, azure-ai-ml's default; DisabledOnly; All), in pages.
func (h Handlers) ListJobSchedules(w http.ResponseWriter, r *http.Request) {
	keep, err := armschedule.ListView(r.URL.Query().Get("listViewType"))
	if err != nil {
		WriteError(w, err)
		return
	}
	list, err := h.schedules().List(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	var kept []*dschedule.JobSchedule
	var keys []string
	for _, sc := range list {
		if keep(sc.IsEnabled) {
			kept, keys = append(kept, sc), append(keys, strings.ToLower(sc.Name))
		}
	}
	lo, hi, next, err := pageKeys(h.Svc.PublicURL(), r, keys, PageSize, url.Values{"listViewType": r.URL.Query()["listViewType"]})
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*armschedule.Resource, 0, hi-lo)
	for _, sc := range kept[lo:hi] {
		out = append(out, armschedule.ToScheduleResource(scopeOf(r), h.Svc.PublicURL(), sc))
	}
	writeList(w, out, next)
}

// GetJobSchedule is GET …/schedules/{name}.
func (h Handlers) GetJobSchedule(w http.ResponseWriter, r *http.Request) {
	sc, err := h.schedules().Get(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, armschedule.ToScheduleResource(scopeOf(r), h.Svc.PublicURL(), sc))
}

// PutJobSchedule is PUT …/schedules/{name}: create (201) or replace
// (200), done at once (provisioningState Succeeded), with
// Azure-AsyncOperation naming the operation (ScheduleOperation) whose
// Succeeded sends azure-ai-ml's poller to GET the schedule: the SDK
// deserializes a PUT's answer twice, and msrest's first pass takes the
// discriminators (actionType, triggerType) out of the body it caches, so
// that an answer read without the final GET fails in the SDK. isEnabled,
// when given, enables or disables it after (begin_enable and
// begin_disable PUT the schedule they read).
func (h Handlers) PutJobSchedule(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	ctx, ws := r.Context(), r.PathValue("ws")
	// A schedule's jobs run as its last writer: as the native route,
	// writing one also needs jobs/write.
	if err := h.Svc.Authorize(ctx, identity.PrincipalFrom(ctx), ws, identity.ActJobsWrite); err != nil {
		WriteError(w, err)
		return
	}
	sc, enabled, err := armschedule.FromScheduleResource(ctx, ws, r.PathValue("name"), body, h.Codes)
	if err != nil {
		WriteError(w, err)
		return
	}
	svc := h.schedules()
	out, created, err := svc.CreateOrUpdate(ctx, ws, sc)
	if err == nil && enabled != nil && *enabled != out.IsEnabled {
		out, err = svc.SetEnabled(ctx, ws, out.Name, *enabled)
	}
	if err != nil {
		WriteError(w, armschedule.Field(err))
		return
	}
	w.Header().Set("Azure-AsyncOperation", operationURL(h.Svc.PublicURL(), r, r.URL.Path, "create"))
	writeJSON(w, createdStatus(created), armschedule.ToScheduleResource(scopeOf(r), h.Svc.PublicURL(), out))
}

// ScheduleOperation is GET …/schedules/{name}/operations/create, the
// operation a PUT names: Succeeded once the schedule is there (a PUT
// stores it before answering).
func (h Handlers) ScheduleOperation(w http.ResponseWriter, r *http.Request) {
	if _, err := h.schedules().Get(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "Succeeded"})
}

// DeleteJobSchedule is DELETE …/schedules/{name}; the jobs it submitted
// stay.
func (h Handlers) DeleteJobSchedule(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		WriteError(w, err)
		return
	}
	deleted(w, h.schedules().Delete(r.Context(), r.PathValue("ws"), r.PathValue("name")))
}

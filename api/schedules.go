package api

import (
	"io"
	"net/http"

	"github.com/shoal-ml/shoal/arm"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/service/schedules"
)

// schedules is the schedules' service over the server's services (it
// holds no state).
func (s *Server) schedules() *schedules.Service { return schedules.Over(s.svc) }

// Job schedules (service/schedules): the document is the schedule YAML's
// keys as JSON, as `shoal schedule create` sends it (its create_job a
// whole job document, the CLI having read the job file); the path names
// the schedule, and a document naming another is refused.

// scheduleRoutes are the native API's job schedule routes.
func (s *Server) scheduleRoutes() []Route {
	const p = "/api/v1/workspaces/{ws}/schedules"
	return []Route{
		{Pattern: "GET " + p, Action: identity.ActSchedulesRead, handler: s.handleListSchedules},
		{Pattern: "GET " + p + "/{name}", Action: identity.ActSchedulesRead, handler: s.handleGetSchedule},
		{Pattern: "PUT " + p + "/{name}", Action: identity.ActSchedulesWrite, handler: s.handlePutSchedule},
		{Pattern: "DELETE " + p + "/{name}", Action: identity.ActSchedulesWrite, handler: s.handleDeleteSchedule},
		{Pattern: "POST " + p + "/{name}/enable", Action: identity.ActSchedulesWrite, handler: s.handleEnableSchedule},
		{Pattern: "POST " + p + "/{name}/disable", Action: identity.ActSchedulesWrite, handler: s.handleDisableSchedule},
		{Pattern: "POST " + p + "/{name}/trigger", Action: identity.ActSchedulesWrite, handler: s.handleTriggerSchedule},
	}
}

// mayRunJobs checks that the caller also holds jobs/write: a schedule
// runs its jobs as whoever last wrote or enabled it, and triggering one
// submits a job at once, so schedules/write alone (a custom role) never
// gets a job run.
func (s *Server) mayRunJobs(r *http.Request) error {
	return s.svc.Authorize(r.Context(), identity.PrincipalFrom(r.Context()), r.PathValue("ws"), identity.ActJobsWrite)
}

func (s *Server) handlePutSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.mayRunJobs(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		body, err = namedDocument(body, "name", r.PathValue("name"))
	}
	var sc *schedule.JobSchedule
	if err == nil {
		sc, err = schedule.Decode(body)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, created, err := s.schedules().CreateOrUpdate(r.Context(), r.PathValue("ws"), sc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCreated(w, created, out)
}

func (s *Server) handleGetSchedule(w http.ResponseWriter, r *http.Request) {
	sc, err := s.schedules().Get(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sc)
}

func (s *Server) handleListSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := s.schedules().List(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*schedule.JobSchedule]{Value: list})
}

func (s *Server) handleDeleteSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.schedules().Delete(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleEnableSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.mayRunJobs(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.setScheduleEnabled(w, r, true)
}

func (s *Server) handleDisableSchedule(w http.ResponseWriter, r *http.Request) {
	s.setScheduleEnabled(w, r, false)
}

// setScheduleEnabled answers the schedule enabled or disabled.
func (s *Server) setScheduleEnabled(w http.ResponseWriter, r *http.Request, enabled bool) {
	sc, err := s.schedules().SetEnabled(r.Context(), r.PathValue("ws"), r.PathValue("name"), enabled)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sc)
}

// handleTriggerSchedule fires a schedule now, as the caller, and answers
// the job, 201.
func (s *Server) handleTriggerSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.mayRunJobs(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, err := s.schedules().Trigger(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, j)
}

// armScheduleRoutes are Azure's job schedule routes (arm.Handlers),
// authorized as the native ones.
func armScheduleRoutes(h arm.Handlers) []Route {
	c := arm.Checked
	const p = armPrefix + "/schedules"
	return []Route{
		{Pattern: "GET " + p, Action: identity.ActSchedulesRead, handler: c(h.ListJobSchedules)},
		{Pattern: "GET " + p + "/{name}", Action: identity.ActSchedulesRead, handler: c(h.GetJobSchedule)},
		{Pattern: "PUT " + p + "/{name}", Action: identity.ActSchedulesWrite, handler: c(h.PutJobSchedule)},
		{Pattern: "DELETE " + p + "/{name}", Action: identity.ActSchedulesWrite, handler: c(h.DeleteJobSchedule)},
		{Pattern: "GET " + p + "/{name}/operations/create", Action: identity.ActSchedulesRead, handler: c(h.ScheduleOperation)},
	}
}

package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/computes"
)

// instanceRoutes are the routes of compute instances: operations, idle
// shutdown and schedules, the setup log, and the application proxy.
func (s *Server) instanceRoutes() []Route {
	const c = "/api/v1/workspaces/{ws}/computes/{name}"
	routes := []Route{
		{Pattern: "POST " + c + "/start", Action: identity.ActComputesStart, handler: s.handleStartInstance},
		{Pattern: "POST " + c + "/stop", Action: identity.ActComputesStop, handler: s.handleStopInstance},
		{Pattern: "POST " + c + "/restart", Action: identity.ActComputesRestart, handler: s.handleRestartInstance},
		{Pattern: "POST " + c + "/enableSso", Action: identity.ActComputesEnableSSO, handler: s.handleEnableSSO},
		{Pattern: "POST " + c + "/postponeShutdown", Action: identity.ActComputesUpdateSchedules, handler: s.handlePostponeShutdown},
		{Pattern: "POST " + c + "/updateIdleShutdownSetting", Action: identity.ActComputesWrite, handler: s.handleUpdateIdleShutdown},
		{Pattern: "POST " + c + "/updateSchedules", Action: identity.ActComputesUpdateSchedules, handler: s.handleUpdateSchedules},
		{Pattern: "GET " + c + "/logs", Action: identity.ActComputesRead, handler: s.handleInstanceLogs},
	}
	// The application proxy passes every method an application may use.
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		routes = append(routes, Route{Pattern: m + " " + c + "/applications/{app}/{path...}", Action: identity.ActComputesApplicationAccess, handler: s.apps.ServeHTTP})
		// A running job's services, through the same proxy (for the
		// job's submitter only: ResolveJobService).
		routes = append(routes, Route{Pattern: m + " /api/v1/workspaces/{ws}/jobs/{name}/nodes/{node}/applications/{svc}/{path...}", Action: identity.ActJobsRead, handler: s.apps.ServeJobService})
	}
	return routes
}

func (s *Server) handleStartInstance(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.StartInstance(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	s.writeOperation(w, r, c, err)
}

func (s *Server) handleStopInstance(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.StopInstance(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	s.writeOperation(w, r, c, err)
}

func (s *Server) handleRestartInstance(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.RestartInstance(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	s.writeOperation(w, r, c, err)
}

// writeOperation answers an operation that goes on in the background:
// 202 with the instance as it is now; clients poll it.
func (s *Server) writeOperation(w http.ResponseWriter, r *http.Request, c *compute.Compute, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusAccepted, c)
}

func (s *Server) handleEnableSSO(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.EnableInstanceSSO(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

func (s *Server) handlePostponeShutdown(w http.ResponseWriter, r *http.Request) {
	var d time.Duration
	if v := r.URL.Query().Get("minutes"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 {
			s.writeError(w, r, core.FieldErrorf("minutes", "must be a whole number of minutes, 1 or more"))
			return
		}
		// Bounded before multiplying: a huge count would wrap to a short
		// (or negative) duration instead of being refused.
		if m > int(computes.MaxPostpone/time.Minute) {
			s.writeError(w, r, core.FieldErrorf("minutes", "a shutdown can be postponed by at most %d minutes (7 days)", int(computes.MaxPostpone/time.Minute)))
			return
		}
		d = time.Duration(m) * time.Minute
	}
	c, err := s.svc.PostponeShutdown(r.Context(), r.PathValue("ws"), r.PathValue("name"), d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

// handleUpdateIdleShutdown is Azure's POST .../updateIdleShutdownSetting
// with {"idleTimeBeforeShutdown": "PT30M"}.
func (s *Server) handleUpdateIdleShutdown(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IdleTimeBeforeShutdown json.RawMessage `json:"idleTimeBeforeShutdown"`
	}
	if err := decodeStrict(r.Body, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := compute.DecodeIdleShutdown(body.IdleTimeBeforeShutdown)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.svc.UpdateCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), &compute.ComputeUpdate{IdleTimeBeforeShutdownMinutes: &m}, r.Header.Get("If-Match"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

// handleUpdateSchedules replaces an instance's schedules; it needs only
// computes/updateSchedules/action, not write access.
func (s *Server) handleUpdateSchedules(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Schedules *compute.ComputeSchedules `json:"schedules"`
	}
	if err := decodeStrict(r.Body, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Schedules == nil {
		body.Schedules = &compute.ComputeSchedules{}
	}
	c, err := s.svc.UpdateCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), &compute.ComputeUpdate{Schedules: body.Schedules}, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

// handleInstanceLogs serves an instance's setup log (?kind=setup, the
// default), or a custom application's (?kind=app&app=<name>), as text.
func (s *Server) handleInstanceLogs(w http.ResponseWriter, r *http.Request) {
	kind := r.URL.Query().Get("kind")
	if kind == "" {
		kind = "setup"
	}
	var f io.ReadCloser
	var err error
	if kind == "app" {
		f, err = s.svc.OpenInstanceAppLog(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.URL.Query().Get("app"))
	} else {
		f, err = s.svc.OpenInstanceLog(r.Context(), r.PathValue("ws"), r.PathValue("name"), kind)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.Copy(w, f)
}

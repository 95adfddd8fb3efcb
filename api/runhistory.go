package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/api/runhistory"
)

// history is run history's handlers over the job service and the file
// store's log reader (package runhistory); they keep no state, so each
// call builds them afresh.
func (s *Server) history() *runhistory.Handlers {
	return runhistory.New(runhistory.Config{Jobs: s.svc, Logs: s.svc.Files(), Key: s.svc.SecretsKey(), PublicURL: s.svc.PublicURL, Clock: s.svc})
}

// historyRoutes are run history's routes that the route table
// authenticates and authorizes (reading runs is reading jobs).
func (s *Server) historyRoutes() []Route {
	var out []Route
	for _, r := range s.history().Routes() {
		out = append(out, Route{Pattern: r.Pattern, Public: r.Public, Action: r.Action, handler: r.Handler})
	}
	return out
}

// mountSignedLogs mounts the log URLs of run details, which carry their
// own signature instead of a credential (azure-ai-ml downloads them
// without one): admitted as anonymous requests, outside the route table
// whose every other route takes a credential.
func (s *Server) mountSignedLogs() {
	s.mux.Handle(runhistory.SignedLogPattern, s.timed(runhistory.SignedLogPattern, s.anonymousOnly(limitBody(http.HandlerFunc(s.history().SignedLog), MaxRequestBytes))))
}

// Package api is Shoal's HTTP layer: the server's handlers for the native
// REST API under /api/v1 and the Go client the CLI uses. It is the only
// package that knows HTTP status codes; the client maps them back to
// shoal.Error codes.
package api

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/service"
)

// MaxRequestBytes bounds request bodies; compute documents are small.
const MaxRequestBytes = 1 << 20

// Server serves the HTTP API.
type Server struct {
	svc *service.Services
	log *slog.Logger
	mux *http.ServeMux
}

// NewServer returns a server over svc.
func NewServer(svc *service.Services, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: svc, log: log, mux: http.NewServeMux()}
	s.routes()
	return s
}

// Route is one entry of the route table.
type Route struct {
	// Pattern is the net/http pattern, "METHOD /path/{var}".
	Pattern string
	// Public routes need no credential; every other route does.
	Public bool
	// Agent routes take a node credential (or, for join, a join token)
	// instead of a user's API token.
	Agent   bool
	handler http.HandlerFunc
}

// Routes returns the route table, so that tests can walk every route.
func (s *Server) Routes() []Route { return s.routeTable() }

func (s *Server) routeTable() []Route {
	return []Route{
		{Pattern: "GET /healthz", Public: true, handler: s.handleHealth},
		{Pattern: "GET /api/v1/workspaces", handler: s.handleListWorkspaces},
		{Pattern: "POST /api/v1/workspaces", handler: s.handleCreateWorkspace},
		{Pattern: "GET /api/v1/workspaces/{ws}", handler: s.handleGetWorkspace},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes", handler: s.handleListComputes},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}", handler: s.handleGetCompute},
		{Pattern: "PUT /api/v1/workspaces/{ws}/computes/{name}", handler: s.handlePutCompute},
		{Pattern: "PATCH /api/v1/workspaces/{ws}/computes/{name}", handler: s.handlePatchCompute},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/computes/{name}", handler: s.handleDeleteCompute},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}/events", handler: s.handleComputeEvents},
		{Pattern: "GET /api/v1/locations", handler: s.handleListLocations},
		{Pattern: "GET /api/v1/locations/{loc}/sizes", handler: s.handleListSizes},
		{Pattern: "GET /api/v1/locations/{loc}/usages", handler: s.handleListUsages},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}/nodes", handler: s.handleListNodes},
		{Pattern: "POST /api/v1/workspaces/{ws}/computes/{name}/nodes/{node}/preempt", handler: s.handlePreemptNode},
		{Pattern: "POST /api/v1/workspaces/{ws}/artifacts", handler: s.handleUploadArtifact},
		{Pattern: "POST /api/v1/workspaces/{ws}/jobs", handler: s.handleSubmitJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs", handler: s.handleListJobs},
		{Pattern: "PUT /api/v1/workspaces/{ws}/jobs/{name}", handler: s.handleSubmitJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}", handler: s.handleGetJob},
		{Pattern: "POST /api/v1/workspaces/{ws}/jobs/{name}/cancel", handler: s.handleCancelJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/attempts", handler: s.handleJobAttempts},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/events", handler: s.handleJobEvents},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/logs", handler: s.handleJobLogs},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/outputs", handler: s.handleJobOutputs},
		{Pattern: "POST /agent/v1/join", Agent: true, handler: s.handleAgentJoin},
		{Pattern: "POST /agent/v1/sync", Agent: true, handler: s.handleAgentSync},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/status", Agent: true, handler: s.handleAgentReport},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/logs", Agent: true, handler: s.handleAgentLogs},
		{Pattern: "PUT /agent/v1/attempts/{attempt}/ranks/{rank}/outputs", Agent: true, handler: s.handleAgentOutputs},
		{Pattern: "GET /agent/v1/attempts/{attempt}/ranks/{rank}/restore", Agent: true, handler: s.handleAgentRestore},
		{Pattern: "GET /agent/v1/artifacts/{id}", Agent: true, handler: s.handleAgentArtifact},
	}
}

func (s *Server) routes() {
	for _, r := range s.routeTable() {
		h := http.Handler(r.handler)
		if !strings.HasSuffix(r.Pattern, "/artifacts") && !strings.HasSuffix(r.Pattern, "/outputs") {
			h = limitBody(h, MaxRequestBytes)
		}
		switch {
		case r.Public:
		case r.Agent && r.Pattern == "POST /agent/v1/join":
			// the join token is checked by the handler: it is single-use
		case r.Agent:
			h = s.authenticateNode(h)
		default:
			h = s.authenticate(h)
		}
		s.mux.Handle(r.Pattern, h)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: errorDetail{Code: "NotFound", Message: "no such route: " + r.Method + " " + r.URL.Path}})
	})
}

// limitBody bounds the request body; uploads set their own, larger bound.
func limitBody(next http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

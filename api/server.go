// Package api is Shoal's HTTP layer: the server's handlers for the native
// REST API under /api/v1 and the Go client the CLI uses. It is the only
// package that knows HTTP status codes; the client maps them back to
// shoal.Error codes.
package api

import (
	"log/slog"
	"net/http"

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
	Public  bool
	handler http.HandlerFunc
}

// Routes returns the route table, so that tests can walk every route.
func (s *Server) Routes() []Route { return s.routeTable() }

func (s *Server) routeTable() []Route {
	return []Route{
		{"GET /healthz", true, s.handleHealth},
		{"GET /api/v1/workspaces", false, s.handleListWorkspaces},
		{"POST /api/v1/workspaces", false, s.handleCreateWorkspace},
		{"GET /api/v1/workspaces/{ws}", false, s.handleGetWorkspace},
		{"GET /api/v1/workspaces/{ws}/computes", false, s.handleListComputes},
		{"GET /api/v1/workspaces/{ws}/computes/{name}", false, s.handleGetCompute},
		{"PUT /api/v1/workspaces/{ws}/computes/{name}", false, s.handlePutCompute},
		{"PATCH /api/v1/workspaces/{ws}/computes/{name}", false, s.handlePatchCompute},
		{"DELETE /api/v1/workspaces/{ws}/computes/{name}", false, s.handleDeleteCompute},
		{"GET /api/v1/workspaces/{ws}/computes/{name}/events", false, s.handleComputeEvents},
		{"GET /api/v1/locations", false, s.handleListLocations},
		{"GET /api/v1/locations/{loc}/sizes", false, s.handleListSizes},
		{"GET /api/v1/locations/{loc}/usages", false, s.handleListUsages},
	}
}

func (s *Server) routes() {
	for _, r := range s.routeTable() {
		h := http.Handler(r.handler)
		if !r.Public {
			h = s.authenticate(h)
		}
		s.mux.Handle(r.Pattern, h)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: errorDetail{Code: "NotFound", Message: "no such route: " + r.Method + " " + r.URL.Path}})
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	s.mux.ServeHTTP(w, r)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

package api

import (
	"net/http"
	"reflect"
	"runtime"
	"strings"

	"github.com/shoal-ml/shoal/api/openapi"
	"github.com/shoal-ml/shoal/api/websession"
)

// OpenAPI builds the OpenAPI 3 document of the native API (/api/v1) from
// the route table (package openapi).
func (s *Server) OpenAPI() map[string]any {
	table := s.routeTable()
	routes := make([]openapi.Route, len(table))
	for i, r := range table {
		routes[i] = openapi.Route{Pattern: r.Pattern, Public: r.Public}
	}
	return openapi.Document(routes, websession.SessionCookie)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeJSON(w, http.StatusOK, s.OpenAPI())
}

// HandlerName is the qualified name of the method that serves a route
// ("<import path>.(*Type).Method"; the test reads that method's source,
// in api or one of its sub-packages, to compare the query parameters it
// reads with those the document lists).
func (r Route) HandlerName() string {
	if r.name != "" {
		return r.name // a generic handler set's method (assetHandlers[T]), which the runtime names with its type arguments
	}
	return strings.TrimSuffix(runtime.FuncForPC(reflect.ValueOf(r.handler).Pointer()).Name(), "-fm")
}

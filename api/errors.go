package api

import (
	"io"
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/identity"
)

// The api package's short names for httpx's writers, which its handlers
// (and environments.go, components.go) call: one mapping, in httpx.

// errorBody is Azure's error envelope (httpx.ErrorBody).
type errorBody = httpx.ErrorBody

type errorDetail = httpx.ErrorDetail

// StatusFor returns the HTTP status of an error code (httpx.StatusFor).
func StatusFor(code string) int { return httpx.StatusFor(code) }

// StatusClientClosedRequest is the status of a request whose client went
// away (httpx.StatusClientClosedRequest).
const StatusClientClosedRequest = httpx.StatusClientClosedRequest

// writeError writes err with the server's error writer (httpx.Errors).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.errs.Write(w, r, err)
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpx.WriteJSON(w, status, v) }

func decodeStrict(body io.Reader, v any) error { return httpx.DecodeStrict(body, v) }

func limitBody(next http.Handler, n int64) http.Handler { return httpx.LimitBody(next, n) }

func bearer(r *http.Request) (string, bool) { return httpx.Bearer(r) }

func nodeFrom(r *http.Request) string { return httpx.NodeFrom(r) }

func requestInfo(r *http.Request, action string) *identity.RequestInfo {
	return httpx.RequestInfo(r, action)
}

func orEmpty[T any](l []T) []T { return httpx.OrEmpty(l) }

func parseSince(v string, now time.Time) (time.Time, error) { return httpx.ParseSince(v, now) }

package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/client"
)

// errorBody is Azure's error envelope, shared with the Go client so that
// what the server writes is what the client reads.
type errorBody = client.ErrorBody

type errorDetail = client.ErrorDetail

// StatusFor returns the HTTP status of an error code (the table lives with
// the client, which maps the status back).
func StatusFor(code string) int { return client.StatusFor(code) }

// StatusClientClosedRequest is the status (nginx's 499) a request gets
// when its client went away before the answer: the metrics and the audit
// log then tell it from a server error.
const StatusClientClosedRequest = 499

// writeError writes err as Azure's error envelope. Internal errors are
// logged with their detail and shown as a generic message. A request
// whose client has gone (its context is done) fails with the context's
// error, or with a driver's interruption: that is no server fault, so it
// is answered 499 and logged at Info.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := shoal.ErrorCode(err)
	if cerr := r.Context().Err(); cerr != nil && (code == shoal.EINTERNAL || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		s.log.Info("client closed the request", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		code = shoal.EINVALID
		err = shoal.Errorf(shoal.EINVALID, "the request body is larger than %d bytes", MaxRequestBytes)
	}
	if code == shoal.ESTORAGEFULL {
		s.log.Error("store disk full", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	if code == shoal.EINTERNAL {
		s.log.Error("internal error", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	if code == shoal.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
	}
	if isARM(r) {
		// Azure's SDKs read Azure's codes (AuthorizationFailed, ...),
		// also for refusals made before the ARM handler runs.
		arm.WriteError(w, err)
		return
	}
	writeJSON(w, StatusFor(code), errorBody{Error: errorDetail{Code: code, Message: shoal.ErrorMessage(err), Target: shoal.ErrorField(err)}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// isARM reports whether a request is for the Azure Resource Manager
// facade, whose errors are in Azure's codes.
func isARM(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/subscriptions/")
}

// Package httpx holds what every HTTP handler package of the server
// shares, so that the sub-packages of api (agentapi, appproxy, mlflow,
// oauth, openapi) and api itself answer alike without importing api: the
// one writer of errors with the one error→status mapping, the JSON
// writer, the strict body decoder and its size bound, the bearer
// credential, the node of an agent's request, the audit description of a
// request, and the one authorization decision (Allow).
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// MaxRequestBytes bounds request bodies; compute documents are small.
// Uploads set their own, larger bound.
const MaxRequestBytes = 1 << 20

// StatusClientClosedRequest is the status (nginx's 499) a request gets
// when its client went away before the answer: the metrics and the audit
// log then tell it from a server error.
const StatusClientClosedRequest = 499

// ErrorBody is Azure's error envelope, shared with the Go client so that
// what the server writes is what the client reads.
type ErrorBody = client.ErrorBody

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail = client.ErrorDetail

// StatusFor returns the HTTP status of an error code (the table lives with
// the client, which maps the status back).
func StatusFor(code string) int { return client.StatusFor(code) }

// Errors writes handlers' errors; Log receives the internal ones, whose
// detail the caller is not shown.
type Errors struct {
	Log *slog.Logger
}

// Write writes err as Azure's error envelope. Internal errors are
// logged with their detail and shown as a generic message. A request
// whose client has gone (its context is done) fails with the context's
// error, or with a driver's interruption: that is no server fault, so it
// is answered 499 and logged at Info.
func (e Errors) Write(w http.ResponseWriter, r *http.Request, err error) {
	log := e.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	code := core.ErrorCode(err)
	if cerr := r.Context().Err(); cerr != nil && (code == core.EINTERNAL || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		log.Info("client closed the request", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) && !IsARM(r) {
		// Too big, not malformed: 413 naming the limit. The code stays
		// EINVALID, which is what the client reads a 413 as.
		WriteErrorJSON(w, http.StatusRequestEntityTooLarge, ErrorBody{Error: ErrorDetail{Code: core.EINVALID, Message: TooLargeMessage(mbe.Limit)}})
		return
	}
	if code == core.ESTORAGEFULL {
		log.Error("store disk full", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	if code == core.EINTERNAL {
		log.Error("internal error", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	if code == core.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
	}
	if IsARM(r) {
		// Azure's SDKs read Azure's codes (AuthorizationFailed, ...),
		// also for refusals made before the ARM handler runs.
		arm.WriteError(w, err)
		return
	}
	status := StatusFor(code)
	if status >= 500 && code != core.EINTERNAL {
		noteFailure(r.Context(), core.ErrorMessage(err))
	}
	WriteErrorJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: core.ErrorMessage(err), Target: core.ErrorField(err)}})
}

// TooLargeMessage is the message of a request whose body is larger than
// limit bytes.
func TooLargeMessage(limit int64) string {
	return fmt.Sprintf("the request body is larger than %d bytes, the most this request may send", limit)
}

// WriteErrorJSON answers an error body as JSON with status. Unlike
// WriteJSON it escapes HTML's characters (<, >, &): an error's message
// may echo what the request sent (its path, a value), and escaped it is
// markup to no reader, whatever the reader takes the answer for.
func WriteErrorJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// NoSniff sets X-Content-Type-Options: nosniff on every answer of next:
// a browser then takes an answer for what its Content-Type says (JSON,
// a download), never for HTML it sniffed in a body that echoes a
// request. An instance's application's own answers (a path with
// /applications/, through the proxy) keep the headers the application
// chose; the proxy's own errors say nosniff (WriteErrorJSON).
func NoSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/applications/") {
			w.Header().Set("X-Content-Type-Options", "nosniff")
		}
		next.ServeHTTP(w, r)
	})
}

// WriteJSON answers v as JSON with status; HTML characters are left as
// they are, since the body is never HTML.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// IsARM reports whether a request is for the Azure Resource Manager
// facade, whose errors are in Azure's codes.
func IsARM(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/subscriptions/")
}

// DecodeStrict decodes a JSON request body into v, refusing unknown
// fields (a misspelt key must not be silently ignored) with EINVALID
// errors that name the field.
func DecodeStrict(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return err // too big, not malformed: Errors.Write answers 413
		}
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if k, ok := strings.CutPrefix(msg, "unknown field "); ok {
			k = strings.Trim(k, `"`)
			return &core.Error{Code: core.EINVALID, Field: k, Message: k + ": unknown key"}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return core.FieldErrorf(te.Field, "has the wrong type (%s)", te.Value)
		}
		return core.Errorf(core.EINVALID, "the request body is not valid JSON (%s)", msg)
	}
	return nil
}

// LimitBody bounds the request body; uploads set their own, larger bound.
func LimitBody(next http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

// Bearer returns the request's bearer token, and whether it has one.
func Bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

type nodeKey struct{}

// WithNode records in ctx the node whose credential authenticated an
// agent's request.
func WithNode(ctx context.Context, nodeID string) context.Context {
	return context.WithValue(ctx, nodeKey{}, nodeID)
}

// NodeFrom returns the node ID the request's credential belongs to.
func NodeFrom(r *http.Request) string {
	id, _ := r.Context().Value(nodeKey{}).(string)
	return id
}

// RequestInfo describes a request for the audit log.
func RequestInfo(r *http.Request, action string) *identity.RequestInfo {
	// The target is the resource path: the action says what was done to it,
	// and `audit list --target` finds a resource and what is under it.
	target := strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
	return &identity.RequestInfo{Action: action, Target: target, Workspace: r.PathValue("ws"), Source: r.RemoteAddr}
}

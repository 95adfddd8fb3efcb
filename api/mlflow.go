package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/tracking"
	"github.com/shoal-ml/shoal/workload"
)

// MLflowPrefix is where a workspace's MLflow tracking API is served:
// MLFLOW_TRACKING_URI is <server>/mlflow/v1/workspaces/<ws>, and MLflow's
// client appends /api/2.0/mlflow/<call> to it.
const MLflowPrefix = "/mlflow/v1/workspaces/"

// mlflowCall is one call of MLflow's tracking REST API that Shoal answers.
type mlflowCall struct {
	method, path string
	handler      func(s *Server, w http.ResponseWriter, r *http.Request, c *mlflowCtx) error
}

// mlflowCalls are the calls MLflow's Python client makes to log from a
// job (mlflow.start_run with MLFLOW_RUN_ID, log_metric, log_metrics,
// log_param, set_tag, end_run), read a run back and search runs; the
// searches also answer GET, as MLflow's server does.
var mlflowCalls = []mlflowCall{
	{"GET", "experiments/get-by-name", (*Server).mlflowGetExperimentByName},
	{"GET", "experiments/get", (*Server).mlflowGetExperiment},
	{"POST", "experiments/create", (*Server).mlflowCreateExperiment},
	{"POST", "experiments/search", (*Server).mlflowSearchExperiments},
	{"GET", "experiments/search", (*Server).mlflowSearchExperiments},
	{"POST", "runs/create", (*Server).mlflowCreateRun},
	{"GET", "runs/get", (*Server).mlflowGetRun},
	{"POST", "runs/update", (*Server).mlflowUpdateRun},
	{"POST", "runs/log-metric", (*Server).mlflowLogMetric},
	{"POST", "runs/log-parameter", (*Server).mlflowLogParam},
	{"POST", "runs/set-tag", (*Server).mlflowSetTag},
	{"POST", "runs/log-batch", (*Server).mlflowLogBatch},
	{"POST", "runs/search", (*Server).mlflowSearchRuns},
	{"GET", "metrics/get-history", (*Server).mlflowGetHistory},
}

// mlflowCtx is a call's caller and workspace.
type mlflowCtx struct {
	p  *shoal.Principal
	ws string
}

// mlflowRoutes mounts the MLflow calls. They authenticate on their own:
// a job's tracking token (MLFLOW_TRACKING_TOKEN) or any credential of the
// API (an API token, a workload identity's JWT) in the Authorization
// header; never a studio cookie, so no browser can be made to write.
func (s *Server) mlflowRoutes() {
	for _, c := range mlflowCalls {
		pattern := c.method + " " + MLflowPrefix + "{ws}/api/2.0/mlflow/" + c.path
		h := c.handler
		s.mux.Handle(pattern, s.timed(pattern, limitBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := s.mlflowCredential(r)
			if err != nil {
				s.asAnonymous(w, r, func() { writeMLflowError(w, err) })
				return
			}
			s.authenticated(w, r)
			ctx := shoal.WithPrincipal(r.Context(), p)
			if err := h(s, w, r.WithContext(ctx), &mlflowCtx{p: p, ws: r.PathValue("ws")}); err != nil {
				if shoal.ErrorCode(err) == shoal.EINTERNAL {
					s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
				}
				writeMLflowError(w, err)
			}
		}), MaxRequestBytes)))
	}
	// Any other call under the prefix: MLflow's own "no such endpoint".
	s.mux.Handle(MLflowPrefix+"{ws}/api/", s.anonymousOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeMLflowJSON(w, http.StatusNotFound, mlflowError{Code: "ENDPOINT_NOT_FOUND", Message: "Shoal does not answer " + r.Method + " " + r.URL.Path + "; see docs/guides/metrics.md for the calls it answers"})
	})))
}

// mlflowCredential resolves the Authorization header's credential.
func (s *Server) mlflowCredential(r *http.Request) (*shoal.Principal, error) {
	token, ok := bearer(r)
	switch {
	case !ok:
		return nil, shoal.Errorf(shoal.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token> (MLFLOW_TRACKING_TOKEN in a job, an API token otherwise)")
	case tracking.IsToken(token):
		return s.tracking.Authenticate(r.Context(), token)
	case workload.LooksLikeJWT(token):
		return s.svc.AuthenticateWorkload(r.Context(), token)
	default:
		return s.svc.Authenticate(r.Context(), token)
	}
}

// mlflowError is MLflow's error body.
type mlflowError struct {
	Code    string `json:"error_code"`
	Message string `json:"message"`
}

// writeMLflowError answers err in MLflow's shape and status, so that the
// client raises the MlflowException its code names (and retries only
// what is worth retrying: 429 and 5xx).
func writeMLflowError(w http.ResponseWriter, err error) {
	code, status := "INTERNAL_ERROR", http.StatusInternalServerError
	msg := shoal.ErrorMessage(err)
	var mbe *http.MaxBytesError
	switch c := shoal.ErrorCode(err); {
	case errors.As(err, &mbe):
		code, status, msg = "INVALID_PARAMETER_VALUE", http.StatusBadRequest, "the request body is larger than "+strconv.Itoa(MaxRequestBytes)+" bytes"
	case c == shoal.EINVALID:
		code, status = "INVALID_PARAMETER_VALUE", http.StatusBadRequest
		if f := shoal.ErrorField(err); f != "" && !strings.Contains(msg, f) {
			msg = f + ": " + msg
		}
	case c == shoal.ENOTFOUND:
		code, status = "RESOURCE_DOES_NOT_EXIST", http.StatusNotFound
	case c == shoal.ECONFLICT:
		code, status = "RESOURCE_ALREADY_EXISTS", http.StatusBadRequest
	case c == shoal.EQUOTA:
		// Not 429: the limit does not pass, and the client retries a 429.
		code, status = "RESOURCE_LIMIT_EXCEEDED", http.StatusBadRequest
	case c == shoal.EUNAUTHORIZED:
		code, status = "UNAUTHENTICATED", http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
	case c == shoal.EFORBIDDEN:
		code, status = "PERMISSION_DENIED", http.StatusForbidden
	case c == shoal.ESTORAGEFULL || c == shoal.EUNAVAILABLE:
		code, status = "TEMPORARILY_UNAVAILABLE", http.StatusServiceUnavailable
	case c == shoal.EINTERNAL:
		msg = "internal error; the server's log has the details"
	}
	writeMLflowJSON(w, status, mlflowError{Code: code, Message: msg})
}

func writeMLflowJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readMLflowBody decodes a POST body. Unknown fields are ignored, as
// MLflow's server ignores them: newer clients send fields (model_id,
// dataset_name) older servers do not know.
func readMLflowBody(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return shoal.FieldErrorf(te.Field, "must be a %s", te.Type)
		}
		return shoal.Errorf(shoal.EINVALID, "the body is not the JSON of this call: %v", err)
	}
	return nil
}

// protoInt64 is an int64 as protobuf's JSON writes it: a number or a
// string of one.
type protoInt64 int64

// UnmarshalJSON accepts 12 and "12".
func (n *protoInt64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.New("not an integer")
	}
	*n = protoInt64(v)
	return nil
}

// protoDouble is a double as protobuf's JSON writes it: a number, or a
// string of one ("NaN" and "Infinity" included, which the checks then
// refuse by name).
type protoDouble float64

// UnmarshalJSON accepts 0.5, "0.5" and "NaN".
func (f *protoDouble) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	*f = protoDouble(v)
	return nil
}

// handleJobMetrics answers what a job logged: each metric's summary, the
// parameters and tags, and with ?history=true every point.
func (s *Server) handleJobMetrics(w http.ResponseWriter, r *http.Request) {
	history := r.URL.Query().Get("history") == "true"
	m, err := s.tracking.JobMetrics(r.Context(), shoal.PrincipalFrom(r.Context()), r.PathValue("ws"), r.PathValue("name"), history)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// Tracking is the service of what jobs log through MLflow (the studio
// reads it).
func (s *Server) Tracking() *tracking.Service { return s.tracking }

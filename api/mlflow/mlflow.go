// Package mlflow serves the subset of MLflow's tracking REST API that jobs
// log through (MLFLOW_TRACKING_URI is <server>/mlflow/v1/workspaces/<ws>),
// in MLflow's own shapes: its objects, its error codes and statuses,
// protobuf's JSON numbers. api.Server mounts its routes next to the
// native API's; they authenticate on their own (a job's tracking token or
// an API credential, never a cookie) and answer errors in MLflow's shape,
// which MLflow's client reads, where the native API answers Azure's.
package mlflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/tracking"
)

// Prefix is where a workspace's MLflow tracking API is served:
// MLFLOW_TRACKING_URI is <server>/mlflow/v1/workspaces/<ws>, and MLflow's
// client appends /api/2.0/mlflow/<call> to it.
const Prefix = "/mlflow/v1/workspaces/"

// mlflowCall is one call of MLflow's tracking REST API that Shoal answers.
type mlflowCall struct {
	method, path string
	handler      func(a *API, w http.ResponseWriter, r *http.Request, c *mlflowCtx) error
}

// mlflowCalls are the calls MLflow's Python client makes to log from a
// job (mlflow.start_run with MLFLOW_RUN_ID, log_metric, log_metrics,
// log_param, set_tag, end_run), read a run back and search runs; the
// searches also answer GET, as MLflow's server does.
var mlflowCalls = []mlflowCall{
	{"GET", "experiments/get-by-name", (*API).mlflowGetExperimentByName},
	{"GET", "experiments/get", (*API).mlflowGetExperiment},
	{"POST", "experiments/create", (*API).mlflowCreateExperiment},
	{"POST", "experiments/search", (*API).mlflowSearchExperiments},
	{"GET", "experiments/search", (*API).mlflowSearchExperiments},
	{"POST", "runs/create", (*API).mlflowCreateRun},
	{"GET", "runs/get", (*API).mlflowGetRun},
	{"POST", "runs/update", (*API).mlflowUpdateRun},
	{"POST", "runs/log-metric", (*API).mlflowLogMetric},
	{"POST", "runs/log-parameter", (*API).mlflowLogParam},
	{"POST", "runs/set-tag", (*API).mlflowSetTag},
	{"POST", "runs/log-batch", (*API).mlflowLogBatch},
	{"POST", "runs/search", (*API).mlflowSearchRuns},
	{"GET", "metrics/get-history", (*API).mlflowGetHistory},
}

// mlflowCtx is a call's caller and workspace.
type mlflowCtx struct {
	p  *identity.Principal
	ws string
}

// API serves MLflow's calls over the services.
type API struct {
	svc      *service.Services
	tracking *tracking.Service
	log      *slog.Logger
	adm      Admission
}

// Admission is how the server admits a request (package admission): the
// calls authenticate on their own, so they tell the server when the
// caller is known (Authenticated) or run a refusal as anonymous.
type Admission struct {
	// AsAnonymous runs h in one of the anonymous slots of r's source,
	// or answers 429.
	AsAnonymous func(w http.ResponseWriter, r *http.Request, h func())
	// Authenticated gives r the read deadline of an authenticated caller.
	Authenticated func(w http.ResponseWriter, r *http.Request)
}

// New returns the MLflow API over svc (credentials) and tr (what jobs
// log), admitting requests with adm and logging internal errors to log.
func New(svc *service.Services, tr *tracking.Service, adm Admission, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, tracking: tr, adm: adm, log: log}
}

// Route is one of the MLflow routes for the server's mux.
type Route struct {
	// Pattern is the net/http pattern.
	Pattern string
	// Handler serves it, authenticating on its own.
	Handler http.Handler
	// Public routes take no credential (the catch-all's "no such
	// endpoint"); the server admits them as anonymous.
	Public bool
}

// Routes are the MLflow calls. They authenticate on their own: a job's
// tracking token (MLFLOW_TRACKING_TOKEN) or any credential of the API (an
// API token, a workload identity's JWT) in the Authorization header;
// never a studio cookie, so no browser can be made to write.
func (a *API) Routes() []Route {
	var routes []Route
	for _, c := range mlflowCalls {
		pattern := c.method + " " + Prefix + "{ws}/api/2.0/mlflow/" + c.path
		h := c.handler
		routes = append(routes, Route{Pattern: pattern, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := a.credential(r)
			if err != nil {
				a.adm.AsAnonymous(w, r, func() { writeMLflowError(w, err) })
				return
			}
			a.adm.Authenticated(w, r)
			ctx := identity.WithPrincipal(r.Context(), p)
			if err := h(a, w, r.WithContext(ctx), &mlflowCtx{p: p, ws: r.PathValue("ws")}); err != nil {
				if core.ErrorCode(err) == core.EINTERNAL {
					a.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
				}
				writeMLflowError(w, err)
			}
		})})
	}
	// Any other call under the prefix: MLflow's own "no such endpoint".
	routes = append(routes, Route{Pattern: Prefix + "{ws}/api/", Public: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeMLflowJSON(w, http.StatusNotFound, mlflowError{Code: "ENDPOINT_NOT_FOUND", Message: "Shoal does not answer " + r.Method + " " + r.URL.Path + "; see docs/guides/metrics.md for the calls it answers"})
	})})
	return routes
}

// credential resolves the Authorization header's credential.
func (a *API) credential(r *http.Request) (*identity.Principal, error) {
	token, ok := httpx.Bearer(r)
	switch {
	case !ok:
		return nil, core.Errorf(core.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token> (MLFLOW_TRACKING_TOKEN in a job, an API token otherwise)")
	case tracking.IsToken(token):
		return a.tracking.Authenticate(r.Context(), token)
	case workload.LooksLikeJWT(token):
		return a.svc.AuthenticateWorkload(r.Context(), token)
	default:
		return a.svc.Authenticate(r.Context(), token)
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
	msg := core.ErrorMessage(err)
	var mbe *http.MaxBytesError
	switch c := core.ErrorCode(err); {
	case errors.As(err, &mbe):
		// Too big, not malformed: 413 (which MLflow's client does not
		// retry), naming the limit.
		code, status, msg = "INVALID_PARAMETER_VALUE", http.StatusRequestEntityTooLarge, httpx.TooLargeMessage(mbe.Limit)
	case c == core.EINVALID:
		code, status = "INVALID_PARAMETER_VALUE", http.StatusBadRequest
		if f := core.ErrorField(err); f != "" && !strings.Contains(msg, f) {
			msg = f + ": " + msg
		}
	case c == core.ENOTFOUND:
		code, status = "RESOURCE_DOES_NOT_EXIST", http.StatusNotFound
	case c == core.ECONFLICT:
		code, status = "RESOURCE_ALREADY_EXISTS", http.StatusBadRequest
	case c == core.EQUOTA:
		// Not 429: the limit does not pass, and the client retries a 429.
		code, status = "RESOURCE_LIMIT_EXCEEDED", http.StatusBadRequest
	case c == core.EUNAUTHORIZED:
		code, status = "UNAUTHENTICATED", http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
	case c == core.EFORBIDDEN:
		code, status = "PERMISSION_DENIED", http.StatusForbidden
	case c == core.ESTORAGEFULL || c == core.EUNAVAILABLE:
		code, status = "TEMPORARILY_UNAVAILABLE", http.StatusServiceUnavailable
	case c == core.EINTERNAL:
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
			return core.FieldErrorf(te.Field, "must be a %s", te.Type)
		}
		return core.Errorf(core.EINVALID, "the body is not the JSON of this call: %v", err)
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

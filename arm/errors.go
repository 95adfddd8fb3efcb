package arm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/client"
)

// errorBody is Azure's error envelope.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Target  string        `json:"target,omitempty"`
	Details []errorDetail `json:"details"`
}

// azureNames are Azure's names for Shoal's error codes. Only the names
// live here: the status comes from client.StatusFor, the one table the
// native API and its client share, so that a code answers the same status
// on both faces. A code without a name here is answered as an internal
// error, so a new code must be named below (TestEveryCodeHasAnAzureName).
var azureNames = map[string]string{
	shoal.EINVALID:        "BadRequest",
	shoal.EUNAUTHORIZED:   "AuthenticationFailed",
	shoal.EFORBIDDEN:      "AuthorizationFailed",
	shoal.ENOTFOUND:       "ResourceNotFound",
	shoal.ECONFLICT:       "Conflict",
	shoal.EPRECONDITION:   "PreconditionFailed",
	shoal.EQUOTA:          "QuotaExceeded",
	shoal.ENOTIMPLEMENTED: "NotImplemented",
	shoal.EUNAVAILABLE:    "BadGateway",
	shoal.ESTORAGEFULL:    "ServiceUnavailable",
	shoal.EINTERNAL:       "InternalServerError",
}

// armStatusOverrides are the statuses ARM answers on purpose apart from
// the shared table, to keep Azure's shape: a quota refusal is Azure's 400
// QuotaExceeded (pinned by api's ARM golden files), and a full store is
// 503 because Azure's SDKs retry a 503 on their own and would give up on
// the native 507. Every other code answers the shared status.
var armStatusOverrides = map[string]int{
	shoal.EQUOTA:       http.StatusBadRequest,
	shoal.ESTORAGEFULL: http.StatusServiceUnavailable,
}

// azureCode returns the status and Azure's code name of err.
func azureCode(err error) (int, string) {
	var e *shoal.Error
	if errors.As(err, &e) && e.Code == codeInvalidAPIVersion {
		return http.StatusBadRequest, codeInvalidAPIVersion
	}
	code := shoal.ErrorCode(err)
	if code == shoal.EINTERNAL && errors.Is(err, context.Canceled) {
		// The client went away mid-request: no server fault (nginx's 499).
		return 499, "ClientClosedRequest"
	}
	name, ok := azureNames[code]
	if !ok {
		return http.StatusInternalServerError, azureNames[shoal.EINTERNAL]
	}
	if s, ok := armStatusOverrides[code]; ok {
		return s, name
	}
	return client.StatusFor(code), name
}

// WriteError writes err in Azure's envelope with Azure's code.
func WriteError(w http.ResponseWriter, err error) {
	status, code := azureCode(err)
	d := errorDetail{Code: code, Message: shoal.ErrorMessage(err), Details: []errorDetail{}}
	var e *shoal.Error
	if errors.As(err, &e) {
		d.Target = e.Field
	}
	if status == http.StatusInternalServerError {
		d.Message = "internal error"
	}
	writeJSON(w, status, errorBody{Error: d})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

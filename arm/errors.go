package arm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// Azure's error envelope (armcore's, which armcompute's instance errors
// share).
type (
	errorBody   = armcore.ErrorBody
	errorDetail = armcore.ErrorDetail
)

// azureNames are Azure's names for Shoal's error codes. Only the names
// live here: the status comes from client.StatusFor, the one table the
// native API and its client share, so that a code answers the same status
// on both faces. A code without a name here is answered as an internal
// error, so a new code must be named below (TestEveryCodeHasAnAzureName).
var azureNames = map[string]string{
	core.EINVALID:        "BadRequest",
	core.EUNAUTHORIZED:   "AuthenticationFailed",
	core.EFORBIDDEN:      "AuthorizationFailed",
	core.ENOTFOUND:       "ResourceNotFound",
	core.ECONFLICT:       "Conflict",
	core.EPRECONDITION:   "PreconditionFailed",
	core.EQUOTA:          "QuotaExceeded",
	core.ENOTIMPLEMENTED: "NotImplemented",
	core.EUNAVAILABLE:    "BadGateway",
	core.ESTORAGEFULL:    "ServiceUnavailable",
	core.EINTERNAL:       "InternalServerError",
}

// armStatusOverrides are the statuses ARM answers on purpose apart from
// the shared table, to keep Azure's shape: a quota refusal is Azure's 400
// QuotaExceeded (pinned by api's ARM golden files), and a full store is
// 503 because Azure's SDKs retry a 503 on their own and would give up on
// the native 507. Every other code answers the shared status.
var armStatusOverrides = map[string]int{
	core.EQUOTA:       http.StatusBadRequest,
	core.ESTORAGEFULL: http.StatusServiceUnavailable,
}

// azureCode returns the status and Azure's code name of err.
func azureCode(err error) (int, string) {
	var e *core.Error
	if errors.As(err, &e) && e.Code == codeInvalidAPIVersion {
		return http.StatusBadRequest, codeInvalidAPIVersion
	}
	code := core.ErrorCode(err)
	if code == core.EINTERNAL && errors.Is(err, context.Canceled) {
		// The client went away mid-request: no server fault (nginx's 499).
		return 499, "ClientClosedRequest"
	}
	name, ok := azureNames[code]
	if !ok {
		return http.StatusInternalServerError, azureNames[core.EINTERNAL]
	}
	if s, ok := armStatusOverrides[code]; ok {
		return s, name
	}
	return client.StatusFor(code), name
}

// codeTooLarge is Azure's code for a request body past the limit.
const codeTooLarge = "RequestEntityTooLarge"

// WriteError writes err in Azure's envelope with Azure's code. A body
// read past its limit (http.MaxBytesReader) is 413 naming the limit: the
// request is too big, not malformed.
func WriteError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: errorDetail{Code: codeTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes, the most a request may send", mbe.Limit), Details: []errorDetail{}}})
		return
	}
	status, code := azureCode(err)
	d := errorDetail{Code: code, Message: core.ErrorMessage(err), Details: []errorDetail{}}
	var e *core.Error
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
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

package arm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/shoal-ml/shoal"
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

// azureCode maps Shoal's error codes to Azure's and their statuses.
func azureCode(err error) (int, string) {
	var e *shoal.Error
	if errors.As(err, &e) && e.Code == codeInvalidAPIVersion {
		return http.StatusBadRequest, codeInvalidAPIVersion
	}
	switch shoal.ErrorCode(err) {
	case shoal.ENOTFOUND:
		return http.StatusNotFound, "ResourceNotFound"
	case shoal.ECONFLICT:
		return http.StatusConflict, "Conflict"
	case shoal.EINVALID:
		return http.StatusBadRequest, "BadRequest"
	case shoal.EFORBIDDEN:
		return http.StatusForbidden, "AuthorizationFailed"
	case shoal.EUNAUTHORIZED:
		return http.StatusUnauthorized, "AuthenticationFailed"
	case shoal.EQUOTA:
		return http.StatusBadRequest, "QuotaExceeded"
	case shoal.EPRECONDITION:
		return http.StatusPreconditionFailed, "PreconditionFailed"
	case shoal.ESTORAGEFULL:
		// 503 is a status Azure's SDKs retry on their own.
		return http.StatusServiceUnavailable, "ServiceUnavailable"
	}
	if errors.Is(err, context.Canceled) {
		// The client went away mid-request: no server fault (nginx's 499).
		return 499, "ClientClosedRequest"
	}
	return http.StatusInternalServerError, "InternalServerError"
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

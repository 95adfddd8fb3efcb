package client

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/shoal-ml/shoal/domain/core"
)

// ErrorBody is Azure's error envelope, {"error": {"code", "message",
// "target"}}: the server in api/ writes it, the client reads it back.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}

// codeToStatus is the one table of the native API's statuses: the server
// answers an error with StatusFor(code), and the client trusts a code in
// an answer only when its status is the one this table gives it.
var codeToStatus = map[string]int{
	core.EINVALID:        http.StatusBadRequest,
	core.EUNAUTHORIZED:   http.StatusUnauthorized,
	core.EFORBIDDEN:      http.StatusForbidden,
	core.ENOTFOUND:       http.StatusNotFound,
	core.ECONFLICT:       http.StatusConflict,
	core.EPRECONDITION:   http.StatusPreconditionFailed,
	core.EQUOTA:          http.StatusConflict,
	core.ENOTIMPLEMENTED: http.StatusNotImplemented,
	core.EUNAVAILABLE:    http.StatusBadGateway,
	core.ESTORAGEFULL:    http.StatusInsufficientStorage,
	core.EINTERNAL:       http.StatusInternalServerError,
}

// StatusFor returns the HTTP status of an error code.
func StatusFor(code string) int {
	if s, ok := codeToStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// statusToCode is the code an error status means when its body names
// none the client can trust (a proxy's page, an older server).
var statusToCode = map[int]string{
	http.StatusBadRequest:            core.EINVALID,
	http.StatusUnauthorized:          core.EUNAUTHORIZED,
	http.StatusForbidden:             core.EFORBIDDEN,
	http.StatusNotFound:              core.ENOTFOUND,
	http.StatusConflict:              core.ECONFLICT,
	http.StatusPreconditionFailed:    core.EPRECONDITION,
	http.StatusNotImplemented:        core.ENOTIMPLEMENTED,
	http.StatusBadGateway:            core.EUNAVAILABLE,
	http.StatusInsufficientStorage:   core.ESTORAGEFULL,
	http.StatusRequestEntityTooLarge: core.EINVALID,
}

// decodeErrorResponse turns an error answer into a *shoal.Error: the
// body's code when its status agrees with it, else the status's code.
func decodeErrorResponse(status int, data []byte) error {
	var body ErrorBody
	code, ok := statusToCode[status]
	if !ok {
		code = core.EINTERNAL
	}
	if json.Unmarshal(data, &body) == nil && body.Error.Message != "" {
		if body.Error.Code != "" && StatusFor(body.Error.Code) == status {
			code = body.Error.Code
		}
		return &core.Error{Code: code, Message: body.Error.Message, Field: body.Error.Target}
	}
	return &core.Error{Code: code, Message: fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))}
}

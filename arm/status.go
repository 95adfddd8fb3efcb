package arm

import (
	"net/http"

	"github.com/shoal-ml/shoal/domain/core"
)

// createdStatus is a PUT's status as Azure answers it: 201 when the PUT
// created the resource, 200 when it replaced one.
func createdStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// deleted answers a DELETE as Azure does: 200, or 204 when there was
// none.
func deleted(w http.ResponseWriter, err error) {
	switch {
	case core.ErrorCode(err) == core.ENOTFOUND:
		w.WriteHeader(http.StatusNoContent)
	case err != nil:
		WriteError(w, err)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

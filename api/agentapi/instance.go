package agentapi

import (
	"io"
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// SetupLog appends (at ?offset=) to the setup log of the
// instance the calling node serves.
func (h *Handlers) SetupLog(w http.ResponseWriter, r *http.Request) {
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		h.errs.Write(w, r, core.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	if err := h.svc.WriteInstanceSetupLog(r.Context(), httpx.NodeFrom(r), offset, data); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// AppLog appends (at ?offset=) to the log of the custom
// application ?app= of the instance the calling node serves.
func (h *Handlers) AppLog(w http.ResponseWriter, r *http.Request) {
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		h.errs.Write(w, r, core.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	if err := h.svc.WriteInstanceAppLog(r.Context(), httpx.NodeFrom(r), r.URL.Query().Get("app"), offset, data); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// InstanceToken mints a workload token for the user's shells
// and notebooks on an instance (its MSI endpoint).
func (h *Handlers) InstanceToken(w http.ResponseWriter, r *http.Request) {
	var req node.TokenRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	resp, err := h.svc.MintInstanceToken(r.Context(), httpx.NodeFrom(r), &req)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, resp)
}

package arm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm/armcompute"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// UpdateCompute is PATCH …/computes/{name}: a cluster's scale settings
// ({"properties": {"properties": {"scaleSettings": {...}}}}).
func (h Handlers) UpdateCompute(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Properties *struct {
			Properties *struct {
				ScaleSettings *armcompute.ScaleSettings `json:"scaleSettings"`
			} `json:"properties"`
		} `json:"properties"`
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err) // a body past the limit: 413
		return
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		WriteError(w, core.FieldErrorf("body", "not a ClusterUpdateParameters: %v", err))
		return
	}
	if body.Properties == nil || body.Properties.Properties == nil || body.Properties.Properties.ScaleSettings == nil {
		WriteError(w, core.FieldErrorf("properties.properties.scaleSettings", "is required"))
		return
	}
	s := body.Properties.Properties.ScaleSettings
	upd := &compute.ComputeUpdate{MinInstances: s.MinNodeCount, MaxInstances: s.MaxNodeCount}
	if s.NodeIdleTimeBeforeScaleDown != "" {
		d, err := parseDuration(s.NodeIdleTimeBeforeScaleDown)
		if err != nil {
			WriteError(w, core.FieldErrorf("properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown", "%v", err))
			return
		}
		secs := int(d / time.Second)
		upd.IdleTimeBeforeScaleDown = &secs
	}
	c, err := h.Svc.UpdateCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), upd, r.Header.Get("If-Match"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.resource(r, c))
}

// InstanceOperation is POST …/computes/{name}/start, /stop or /restart:
// 202 with the operation the SDKs poll (they accept nothing else).
func (h Handlers) InstanceOperation(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var err error
		ws, name := r.PathValue("ws"), r.PathValue("name")
		switch kind {
		case "start":
			_, err = h.Svc.StartInstance(r.Context(), ws, name)
		case "stop":
			_, err = h.Svc.StopInstance(r.Context(), ws, name)
		default:
			_, err = h.Svc.RestartInstance(r.Context(), ws, name)
		}
		if err != nil {
			WriteError(w, err)
			return
		}
		op := operationURL(h.Svc.PublicURL(), r, strings.TrimSuffix(r.URL.Path, "/"+kind), kind)
		w.Header().Set("Azure-AsyncOperation", op)
		w.Header().Set("Location", op)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusAccepted)
	}
}

// ListKeys is POST …/computes/{name}/listKeys. A cluster or an instance
// has no keys a client could use (its SSH settings stay write-only), so
// the answer is the compute type alone, as Azure's for AmlCompute.
func (h Handlers) ListKeys(w http.ResponseWriter, r *http.Request) {
	c, err := h.Svc.FindCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	t := "AmlCompute"
	switch {
	case c.IsInstance():
		t = "ComputeInstance"
	case c.Type == compute.ComputeTypeKubernetes:
		t = "Kubernetes"
	}
	writeJSON(w, http.StatusOK, map[string]string{"computeType": t})
}

// UpdateIdleShutdown is POST …/computes/{name}/updateIdleShutdownSetting
// with {"idleTimeBeforeShutdown": "PT30M"} (preview api-versions): 200
// with no body, as Azure answers.
func (h Handlers) UpdateIdleShutdown(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IdleTimeBeforeShutdown json.RawMessage `json:"idleTimeBeforeShutdown"`
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err) // a body past the limit: 413
		return
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		WriteError(w, core.FieldErrorf("body", "not an IdleShutdownSetting: %v", err))
		return
	}
	m, err := compute.DecodeIdleShutdown(body.IdleTimeBeforeShutdown)
	if err != nil {
		WriteError(w, err)
		return
	}
	if _, err := h.Svc.UpdateCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), &compute.ComputeUpdate{IdleTimeBeforeShutdownMinutes: &m}, r.Header.Get("If-Match")); err != nil {
		WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

package runhistory

import (
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// ServiceInstances is GET …/runs/{id}/serviceinstances/{nodeId}: the
// job's services on node index nodeId, what azure-ai-ml's
// jobs.show_services(name, node_index) reads ({instances: {name: {type,
// port, status, error, endpoint, properties}}}). The endpoint is the
// application proxy's, reachable by the job's submitter while it runs.
func (h *Handlers) ServiceInstances(w http.ResponseWriter, r *http.Request) {
	idx, err := strconv.Atoi(r.PathValue("node"))
	if err != nil || idx < 0 {
		writeError(w, core.FieldErrorf("nodeId", "must be a node index (0, 1, ...), got %q", core.Short(r.PathValue("node"))))
		return
	}
	j, err := h.findJob(r, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	instances := map[string]any{}
	for _, name := range core.SortedKeys(j.Services) {
		sv := j.Services[name]
		if sv == nil || !sv.ServesOnNode(idx) {
			continue
		}
		o := map[string]any{"type": interactive.ServiceTypeREST(sv.Type), "status": interactive.ServiceStatusStarting}
		if sv.Port != 0 {
			o["port"] = sv.Port
		}
		if len(sv.Properties) > 0 {
			o["properties"] = sv.Properties
		}
		for _, in := range sv.Instances {
			if in.NodeIndex != idx {
				continue
			}
			o["status"] = in.Status
			if in.Endpoint != "" {
				o["endpoint"] = in.Endpoint
			}
			if in.ErrorMessage != "" {
				o["error"] = map[string]any{"error": map[string]any{"code": "ServiceFailed", "message": in.ErrorMessage}}
			}
		}
		instances[name] = o
	}
	writeJSON(w, http.StatusOK, map[string]any{"instances": instances})
}

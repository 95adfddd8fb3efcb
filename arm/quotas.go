package arm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
)

// quotaType is the resource type of a workspace's quota of a VM family.
const quotaType = "Microsoft.MachineLearningServices/workspaces/quotas"

// quotaID is the resource ID of a workspace's quota of a family.
func quotaID(sub, rg, ws, family string) string {
	if rg == "" {
		rg = compute.ResourceGroup
	}
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.MachineLearningServices/workspaces/%s/quotas/%s", sub, rg, ws, family)
}

// Quotas is GET /subscriptions/{sub}/providers/…/locations/{loc}/quotas:
// each workspace's limit of each VM family at the location (its own,
// set with updateQuotas, or the location's), for the workspaces whose
// quotas the caller may read.
func (h Handlers) Quotas(w http.ResponseWriter, r *http.Request) {
	list, err := h.Svc.ListWorkspaceQuotas(r.Context(), r.PathValue("loc"))
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]map[string]any, len(list))
	for i, q := range list {
		out[i] = map[string]any{
			"id": quotaID(r.PathValue("sub"), q.ResourceGroup, q.Workspace, q.Family), "type": quotaType,
			"amlWorkspaceLocation": q.Location, "unit": "Count", "limit": q.Limit,
			"name": map[string]string{"value": q.Family, "localizedValue": familyLocalized(q.Family) + " Cluster Dedicated vCPUs"},
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": out})
}

// familyLocalized turns "standardDSv2Family" into "Standard DSv2 Family".
func familyLocalized(f string) string {
	base, ok := strings.CutSuffix(f, "Family")
	if s, ok2 := strings.CutPrefix(base, "standard"); ok && ok2 {
		return "Standard " + s + " Family"
	}
	return f
}

// quotaUpdateParameters is the body of updateQuotas.
type quotaUpdateParameters struct {
	Location string `json:"location"`
	Value    []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Limit    *int64 `json:"limit"`
		Unit     string `json:"unit"`
		Location string `json:"location"`
	} `json:"value"`
}

// UpdateQuotas is POST /subscriptions/{sub}/providers/…/locations/{loc}/updateQuotas:
// workspaces' limits of VM families, each item applied or refused with
// its status (Success, InvalidVMFamilyName,
// InvalidQuotaExceedsSubscriptionLimit, InvalidQuotaBelowClusterMinimum,
// Failure), as Azure answers.
func (h Handlers) UpdateQuotas(w http.ResponseWriter, r *http.Request) {
	var body quotaUpdateParameters
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err) // a body past the limit: 413
		return
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		WriteError(w, core.FieldErrorf("body", "not a QuotaUpdateParameters: %v", err))
		return
	}
	if len(body.Value) == 0 {
		WriteError(w, core.FieldErrorf("value", "names no quota to update"))
		return
	}
	updates := make([]money.QuotaUpdate, len(body.Value))
	for i, v := range body.Value {
		f := fmt.Sprintf("value[%d]", i)
		ws, family, ok := parseQuotaID(v.ID)
		if !ok {
			WriteError(w, core.FieldErrorf(f+".id", "%q is not …/workspaces/{workspace}/quotas/{vmFamily}", v.ID))
			return
		}
		if v.Limit == nil {
			WriteError(w, core.FieldErrorf(f+".limit", "is required"))
			return
		}
		if *v.Limit > 1<<31 {
			WriteError(w, core.FieldErrorf(f+".limit", "%d is not a vCPU count", *v.Limit))
			return
		}
		if v.Unit != "" && v.Unit != "Count" {
			WriteError(w, core.FieldErrorf(f+".unit", "%q is not Count", v.Unit))
			return
		}
		updates[i] = money.QuotaUpdate{Workspace: ws, Family: family, Limit: int(*v.Limit)}
	}
	results, err := h.Svc.UpdateWorkspaceQuotas(r.Context(), r.PathValue("loc"), updates)
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]map[string]any, len(results))
	for i, res := range results {
		out[i] = map[string]any{"id": body.Value[i].ID, "type": quotaType, "limit": res.Limit, "unit": "Count", "status": res.Status}
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": out})
}

// parseQuotaID reads the workspace and family of a quota's resource ID.
func parseQuotaID(id string) (ws, family string, ok bool) {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	for i := 0; i+3 < len(parts); i++ {
		if strings.EqualFold(parts[i], "workspaces") && strings.EqualFold(parts[i+2], "quotas") && i+4 == len(parts) {
			return parts[i+1], parts[i+3], parts[i+1] != "" && parts[i+3] != ""
		}
	}
	return "", "", false
}

package arm

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm/armcompute"
	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/batchendpoints"
	"github.com/shoal-ml/shoal/service/blobs"
	"github.com/shoal-ml/shoal/service/datastores"
)

// Handlers serve the ARM routes over the services. The caller (package
// api) authenticates and authorizes each route as it does the native
// ones: the same roles and the same audit.
type Handlers struct {
	Svc *service.Services
	// Envs registers environments (package environments), a service of
	// its own beside Svc.
	Envs asset.AssetService[*asset.Environment]
	// Comps registers command components (package components), as Envs.
	Comps asset.AssetService[*job.Component]
	// DataSvc and ModelSvc register data assets and models, as Envs.
	DataSvc  asset.AssetService[*asset.Data]
	ModelSvc asset.AssetService[*asset.Model]
	// Datastores keeps datastores (package datastores).
	Datastores *datastores.Service
	// Codes resolves a job's codeId to the artifact of its code (nil:
	// Azure code assets are not served, and a job naming code is refused).
	Codes CodeResolver
	// CodeSvc registers code versions (package codes), as Envs.
	CodeSvc asset.AssetService[*asset.Code]
	// Blobs signs the SAS of workspaceblobstore (listSecrets,
	// startPendingUpload); nil: the server signs none.
	Blobs *blobs.Service
	// Batch keeps batch endpoints and deployments and invokes them.
	Batch *batchendpoints.Service
}

// Checked wraps an ARM handler: an api-version it does not speak is
// refused as Azure refuses it, before anything else.
func Checked(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := CheckAPIVersion(r.URL.Query().Get("api-version")); err != nil {
			WriteError(w, err)
			return
		}
		h(w, r)
	}
}

// Scope is the subscription and resource group a request named: echoed
// in ids, never required to exist (armcore's, shared with the
// translating sub-packages).
type Scope = armcore.Scope

// scopeOf is the scope request r names.
func scopeOf(r *http.Request) Scope {
	return Scope{Subscription: r.PathValue("sub"), ResourceGroup: r.PathValue("rg")}
}

// Workspace is GET …/workspaces/{ws}.
func (h Handlers) Workspace(w http.ResponseWriter, r *http.Request) {
	ws, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": scopeOf(r).WorkspaceID(ws.Name), "name": ws.Name, "type": "Microsoft.MachineLearningServices/workspaces",
		"location": ws.Location, "kind": "Default", "tags": map[string]string{},
		"properties": map[string]any{
			"friendlyName": ws.Name, "description": ws.Description, "provisioningState": "Succeeded",
			"creationTime": ws.CreatedOn, "workspaceId": ws.Name,
			// the discovery document of package api/runhistory (its
			// DiscoveryPath): where azure-ai-ml finds run history
			"discoveryUrl": strings.TrimRight(h.Svc.PublicURL(), "/") + "/discovery",
		},
	})
}

// ListComputes is GET …/computes: PageSize computes by name, with an
// absolute nextLink while more follow.
func (h Handlers) ListComputes(w http.ResponseWriter, r *http.Request) {
	list, err := h.Svc.ListComputes(r.Context(), compute.ComputeFilter{Workspace: r.PathValue("ws")})
	if err != nil {
		WriteError(w, err)
		return
	}
	list, next, err := page(h.Svc.PublicURL(), r, list)
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*armcompute.Resource, len(list))
	for i, c := range list {
		out[i] = h.resource(r, c)
	}
	body := map[string]any{"value": out}
	if next != "" {
		body["nextLink"] = next
	}
	writeJSON(w, http.StatusOK, body)
}

// GetCompute is GET …/computes/{name}.
func (h Handlers) GetCompute(w http.ResponseWriter, r *http.Request) {
	c, err := h.Svc.FindCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.resource(r, c))
}

// PutCompute is PUT …/computes/{name}: create (201) or apply (200),
// with Azure-AsyncOperation naming the operation the SDKs poll.
func (h Handlers) PutCompute(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	spec, err := armcompute.FromResource(r.PathValue("name"), body)
	if err != nil {
		WriteError(w, err)
		return
	}
	spec.KeepScaleWindows = true // Azure has no such key: an ARM PUT keeps them
	c, created, err := h.Svc.CreateOrApplyCompute(r.Context(), r.PathValue("ws"), spec, r.Header.Get("If-Match"))
	if err != nil {
		WriteError(w, err)
		return
	}
	status := createdStatus(created)
	w.Header().Set("Azure-AsyncOperation", operationURL(h.Svc.PublicURL(), r, r.URL.Path, "create"))
	w.Header().Set("Retry-After", "1")
	writeJSON(w, status, h.resource(r, c))
}

// DeleteCompute is DELETE …/computes/{name}: 202, then the operation's
// status says when it is gone.
func (h Handlers) DeleteCompute(w http.ResponseWriter, r *http.Request) {
	switch a := r.URL.Query().Get("underlyingResourceAction"); a {
	case "", "Delete", "Detach":
	default:
		WriteError(w, core.FieldErrorf("underlyingResourceAction", "%q is not Delete or Detach", a))
		return
	}
	if _, err := h.Svc.DeleteCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.Header.Get("If-Match")); err != nil {
		WriteError(w, err)
		return
	}
	op := operationURL(h.Svc.PublicURL(), r, r.URL.Path, "delete")
	w.Header().Set("Azure-AsyncOperation", op)
	w.Header().Set("Location", op)
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusAccepted)
}

// Operation is GET …/computes/{name}/operations/{kind}: the status the
// SDKs poll after a PUT or DELETE, read from the compute itself.
func (h Handlers) Operation(w http.ResponseWriter, r *http.Request) {
	c, err := h.Svc.FindCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	status := "InProgress"
	switch {
	case r.PathValue("kind") == "delete" && core.ErrorCode(err) == core.ENOTFOUND:
		status = "Succeeded"
	case err != nil:
		WriteError(w, err)
		return
	case r.PathValue("kind") == "create" && c.ProvisioningState == compute.ProvisioningSucceeded && !c.IsInstance():
		status = "Succeeded"
	case c.LastOperation != nil && strings.EqualFold(c.LastOperation.OperationName, r.PathValue("kind")):
		// An instance's create, start, stop or restart: its last operation
		// says. (An instance's provisioning state turns Succeeded once its
		// spec is accepted, before it runs: the SDK's create would end
		// with the instance still Creating.)
		switch st := c.LastOperation.OperationStatus; {
		case st == "Succeeded":
			status = "Succeeded"
		case strings.HasSuffix(st, "Failed"):
			status = "Failed"
		}
	case c.ProvisioningState == compute.ProvisioningFailed:
		status = "Failed"
	case r.PathValue("kind") == "create" && c.ProvisioningState == compute.ProvisioningSucceeded && c.LastOperation == nil:
		status = "Succeeded" // an instance stored before it had operations
	}
	body := map[string]any{"status": status, "startTime": time.Now().UTC()}
	if status == "Failed" {
		body["error"] = errorDetail{Code: "ComputeProvisioningFailed", Message: "the compute failed to provision", Details: []errorDetail{}}
	}
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusOK, body)
}

// operationURL is the absolute URL of an operation on the compute at
// computePath, with the request's api-version (the SDKs GET it as it is,
// with their bearer token): on the server's configured URL (base), never
// the request's Host header, which a client or a proxy can set to
// anything.
func operationURL(base string, r *http.Request, computePath, kind string) string {
	u := serverURL(base, r)
	u.Path = strings.TrimSuffix(u.Path, "/") + strings.TrimSuffix(computePath, "/") + "/operations/" + kind
	u.RawQuery = "api-version=" + url.QueryEscape(r.URL.Query().Get("api-version"))
	return u.String()
}

// serverURL is the server's configured URL (base); the request's own
// scheme and host only when none is configured.
func serverURL(base string, r *http.Request) *url.URL {
	if u, err := url.Parse(base); err == nil && base != "" && u.Host != "" {
		return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: r.Host}
}

// ListNodes is POST …/computes/{name}/listNodes.
func (h Handlers) ListNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := h.Svc.ListNodes(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]map[string]any, len(nodes))
	for i, n := range nodes {
		out[i] = map[string]any{"nodeId": n.ID, "privateIpAddress": n.PrivateIPAddress, "publicIpAddress": n.PublicIPAddress,
			"port": nodePort(n), "nodeState": n.State, "runId": n.CurrentJobName}
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
}

// Usages is GET /subscriptions/{sub}/providers/…/locations/{loc}/usages.
func (h Handlers) Usages(w http.ResponseWriter, r *http.Request) {
	usages, err := h.Svc.ListUsages(r.Context(), r.PathValue("loc"))
	if err != nil {
		WriteError(w, err)
		return
	}
	// The ids name the caller's subscription, as Azure's do.
	sub := "/subscriptions/" + r.PathValue("sub") + "/"
	out := make([]map[string]any, len(usages))
	for i, u := range usages {
		out[i] = map[string]any{"id": strings.Replace(u.ID, "/subscriptions/"+compute.Subscription+"/", sub, 1), "amlWorkspaceLocation": u.AmlWorkspaceLocation, "type": u.Type, "unit": u.Unit,
			"currentValue": u.CurrentValue, "limit": u.Limit, "name": map[string]string{"value": u.Name.Value, "localizedValue": u.Name.LocalizedValue}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": out})
}

// VMSizes is GET /subscriptions/{sub}/providers/…/locations/{loc}/vmSizes.
func (h Handlers) VMSizes(w http.ResponseWriter, r *http.Request) {
	loc, err := h.Svc.Catalog().Location(r.PathValue("loc"))
	if err != nil {
		WriteError(w, err)
		return
	}
	var out []map[string]any
	for _, sz := range h.Svc.Catalog().SizesAt(loc) {
		types := make([]string, len(sz.SupportedComputeTypes))
		for i, t := range sz.SupportedComputeTypes {
			types[i] = map[string]string{"amlcompute": "AmlCompute", "computeinstance": "ComputeInstance", "kubernetes": "Kubernetes"}[strings.ToLower(t)]
			if types[i] == "" {
				types[i] = t
			}
		}
		out = append(out, map[string]any{"name": sz.Name, "family": sz.Family, "vCPUs": sz.VCPUs, "gpus": sz.GPUs,
			"osVhdSizeMB": sz.OSVhdSizeMB, "maxResourceVolumeMB": sz.MaxResourceVolumeMB, "memoryGB": sz.MemoryGB,
			"lowPriorityCapable": sz.LowPriorityCapable, "premiumIO": sz.PremiumIO, "supportedComputeTypes": types})
	}
	writeJSON(w, http.StatusOK, map[string]any{"value": out})
}

// nodePort is a node's port as Azure lists it: its SSH port (a cluster
// with SSH access), else the port its jobs' processes reach it on.
func nodePort(n *node.Node) int {
	if n.SSHPort > 0 {
		return n.SSHPort
	}
	return n.Port
}

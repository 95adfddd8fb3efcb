package api

import (
	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/identity"
)

// armPrefix is the ARM path of a workspace; {sub} and {rg} are accepted
// and echoed, never required to exist.
const armPrefix = "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.MachineLearningServices/workspaces/{ws}"

// armLocation is the ARM path of a location's catalog and quota.
const armLocation = "/subscriptions/{sub}/providers/Microsoft.MachineLearningServices/locations/{loc}"

// armRoutes are the routes Azure's SDKs call (package arm), authorized
// and audited as the native routes that do the same.
func (s *Server) armRoutes() []Route {
	h := arm.Handlers{Svc: s.svc, Envs: s.envs, Comps: s.comps, DataSvc: s.data, ModelSvc: s.models, Datastores: s.datastores, Batch: s.batch}
	s.withBlobs(&h)
	c := arm.Checked
	routes := []Route{
		{Pattern: "GET " + armPrefix, Action: identity.ActWorkspacesRead, handler: c(h.Workspace)},
		{Pattern: "GET " + armPrefix + "/datastores", Action: identity.ActDatastoresRead, handler: c(h.ListDatastores)},
		{Pattern: "GET " + armPrefix + "/datastores/{name}", Action: identity.ActDatastoresRead, handler: c(h.GetDatastore)},
		{Pattern: "PUT " + armPrefix + "/datastores/{name}", Action: identity.ActDatastoresWrite, handler: c(h.PutDatastore)},
		{Pattern: "DELETE " + armPrefix + "/datastores/{name}", Action: identity.ActDatastoresWrite, handler: c(h.DeleteDatastore)},
		// Azure requires the right to write datastores to list secrets.
		{Pattern: "POST " + armPrefix + "/datastores/{name}/listSecrets", Action: identity.ActDatastoresWrite, Audit: "datastores/listSecrets/action", handler: c(h.ListDatastoreSecrets)},
		{Pattern: "GET " + armPrefix + "/computes", Action: identity.ActComputesRead, handler: c(h.ListComputes)},
		{Pattern: "GET " + armPrefix + "/computes/{name}", Action: identity.ActComputesRead, handler: c(h.GetCompute)},
		{Pattern: "PUT " + armPrefix + "/computes/{name}", Action: identity.ActComputesWrite, handler: c(h.PutCompute)},
		{Pattern: "PATCH " + armPrefix + "/computes/{name}", Action: identity.ActComputesWrite, handler: c(h.UpdateCompute)},
		{Pattern: "POST " + armPrefix + "/computes/{name}/start", Action: identity.ActComputesStart, handler: c(h.InstanceOperation("start"))},
		{Pattern: "POST " + armPrefix + "/computes/{name}/stop", Action: identity.ActComputesStop, handler: c(h.InstanceOperation("stop"))},
		{Pattern: "POST " + armPrefix + "/computes/{name}/restart", Action: identity.ActComputesRestart, handler: c(h.InstanceOperation("restart"))},
		{Pattern: "DELETE " + armPrefix + "/computes/{name}", Action: identity.ActComputesDelete, handler: c(h.DeleteCompute)},
		{Pattern: "GET " + armPrefix + "/computes/{name}/operations/{kind}", Action: identity.ActComputesRead, handler: c(h.Operation)},
		{Pattern: "POST " + armPrefix + "/computes/{name}/listNodes", Action: identity.ActComputesRead, handler: c(h.ListNodes)},
		{Pattern: "POST " + armPrefix + "/computes/{name}/updateIdleShutdownSetting", Action: identity.ActComputesWrite, handler: c(h.UpdateIdleShutdown)},
		{Pattern: "POST " + armPrefix + "/computes/{name}/listKeys", Action: identity.ActComputesWrite, handler: c(h.ListKeys)},
		// Quotas are per workspace: the services authorize each workspace.
		{Pattern: "GET " + armLocation + "/quotas", Action: ActionAuthenticated, Audit: identity.ActQuotasRead, handler: c(h.Quotas)},
		{Pattern: "POST " + armLocation + "/updateQuotas", Action: ActionAuthenticated, Audit: identity.ActQuotasWrite, handler: c(h.UpdateQuotas)},
		{Pattern: "GET " + armLocation + "/usages", Action: ActionAuthenticated, handler: c(h.Usages)},
		{Pattern: "GET " + armLocation + "/vmSizes", Action: ActionAuthenticated, handler: c(h.VMSizes)},
	}
	// Registered environments and components: containers and versions,
	// authorized as the kinds' native routes.
	routes = append(routes, armAssetRoutes("environments", identity.ActEnvironmentsRead, identity.ActEnvironmentsWrite, h.Environments())...)
	routes = append(routes, armAssetRoutes("data", identity.ActDataRead, identity.ActDataWrite, h.Data())...)
	routes = append(routes, armAssetRoutes("models", identity.ActModelsRead, identity.ActModelsWrite, h.Models())...)
	routes = append(routes, armJobRoutes(h)...)
	routes = append(routes, s.armCodeRoutes(h)...)
	routes = append(append(routes, armBatchRoutes(h)...), armScheduleRoutes(h)...)
	return append(routes, armAssetRoutes("components", identity.ActComponentsRead, identity.ActComponentsWrite, h.Components())...)
}

// armAssetRoutes are the ARM routes of one kind of versioned asset, under
// armPrefix/{collection}, guarded by the kind's read and write actions.
func armAssetRoutes(collection, read, write string, h arm.AssetRoutes) []Route {
	c, base := arm.Checked, armPrefix+"/"+collection
	return []Route{
		{Pattern: "GET " + base, Action: read, handler: c(h.ListContainers)},
		{Pattern: "GET " + base + "/{name}", Action: read, handler: c(h.GetContainer)},
		{Pattern: "PUT " + base + "/{name}", Action: write, handler: c(h.PutContainer)},
		{Pattern: "DELETE " + base + "/{name}", Action: write, handler: c(h.Delete)},
		{Pattern: "GET " + base + "/{name}/versions", Action: read, handler: c(h.ListVersions)},
		{Pattern: "GET " + base + "/{name}/versions/{version}", Action: read, handler: c(h.GetVersion)},
		{Pattern: "PUT " + base + "/{name}/versions/{version}", Action: write, handler: c(h.PutVersion)},
		{Pattern: "DELETE " + base + "/{name}/versions/{version}", Action: write, handler: c(h.Delete)},
	}
}

package api

import (
	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/identity"
)

// armJobRoutes are Azure's job routes under the workspace (PUT, GET,
// list, DELETE, cancel), authorized as the native job routes: reading
// needs jobs/read, submitting jobs/write, cancelling jobs/cancel.
func armJobRoutes(h arm.Handlers) []Route {
	c, base := arm.Checked, armPrefix+"/jobs"
	return []Route{
		{Pattern: "GET " + base, Action: identity.ActJobsRead, handler: c(h.ListJobs)},
		{Pattern: "GET " + base + "/{name}", Action: identity.ActJobsRead, handler: c(h.GetJob)},
		{Pattern: "PUT " + base + "/{name}", Action: identity.ActJobsWrite, handler: c(h.PutJob)},
		{Pattern: "DELETE " + base + "/{name}", Action: identity.ActJobsWrite, handler: c(h.DeleteJob)},
		{Pattern: "POST " + base + "/{name}/cancel", Action: identity.ActJobsCancel, handler: c(h.CancelJob)},
		// Where the cancel's Location points: the SDK's poller waits
		// there until the job has ended.
		{Pattern: "GET " + base + "/{name}/operations/cancel", Action: identity.ActJobsRead, handler: c(h.CancelOperation)},
	}
}

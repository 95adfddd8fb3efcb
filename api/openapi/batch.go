package openapi

import (
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/job"
)

// The native routes of batch endpoints and deployments (issue 38), kept
// beside apiDocs, which grows with every kind.
func init() {
	const p = "/api/v1/workspaces/{ws}/batch-endpoints"
	for k, v := range map[string]opDoc{
		"GET " + p:                                  {summary: "List the workspace's batch endpoints", out: list[batch.Endpoint]{}},
		"GET " + p + "/{name}":                      {summary: "Show a batch endpoint", out: batch.Endpoint{}},
		"PUT " + p + "/{name}":                      {summary: "Create (201) or update (200) a batch endpoint from Azure's batchEndpoint YAML keys", in: batch.Endpoint{}, out: batch.Endpoint{}, status: 201},
		"DELETE " + p + "/{name}":                   {summary: "Delete a batch endpoint and its deployments (the jobs it started stay)", status: 204},
		"POST " + p + "/{name}/invoke":              {summary: "Invoke a batch endpoint: start a parallel job that scores the input with the named deployment, or the default", in: batch.Invocation{}, out: job.Job{}, status: 201},
		"POST " + p + "/{name}/jobs":                {summary: "Azure's scoring URI: ml_client.batch_endpoints.invoke's BatchJobResource (the deployment in the azureml-model-deployment header) starts a job", status: 200},
		"POST " + p + "/{name}/tokens":              {summary: "Make a token that may only invoke this endpoint, acting as the caller (shown once; revoked with shoal token revoke)", status: 201},
		"GET " + p + "/{name}/jobs":                 {summary: "List the jobs a batch endpoint's invocations started, newest first", out: list[job.Job]{}},
		"GET " + p + "/{name}/deployments":          {summary: "List a batch endpoint's deployments", out: list[batch.Deployment]{}},
		"GET " + p + "/{name}/deployments/{dep}":    {summary: "Show a batch deployment", out: batch.Deployment{}},
		"PUT " + p + "/{name}/deployments/{dep}":    {summary: "Create (201) or update (200) a batch deployment from Azure's modelBatchDeployment YAML keys (code an uploaded folder); set_default=true makes it the endpoint's default", in: batch.Deployment{}, out: batch.Deployment{}, status: 201, query: []string{"set_default"}},
		"DELETE " + p + "/{name}/deployments/{dep}": {summary: "Delete a batch deployment (the default only when it is the last)", status: 204},
	} {
		apiDocs[k] = v
	}
}

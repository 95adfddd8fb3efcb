package arm

import (
	"encoding/json"
	"github.com/shoal-ml/shoal/arm/armbatch"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// ListBatchEndpoints is GET …/batchEndpoints (one page: a workspace has
// few).
func (h Handlers) ListBatchEndpoints(w http.ResponseWriter, r *http.Request) {
	list, err := h.Batch.ListEndpoints(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*armbatch.EndpointResource, 0, len(list))
	for _, e := range list {
		out = append(out, armbatch.ToBatchEndpointResource(scopeOf(r), h.batchBase(r), e))
	}
	writeList(w, out, "")
}

// GetBatchEndpoint is GET …/batchEndpoints/{name}.
func (h Handlers) GetBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	e, err := h.Batch.GetEndpoint(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, armbatch.ToBatchEndpointResource(scopeOf(r), h.batchBase(r), e))
}

// PutBatchEndpoint is PUT …/batchEndpoints/{name}: create (201) or
// update (200), done at once (provisioningState Succeeded).
func (h Handlers) PutBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	e, err := armbatch.FromBatchEndpointResource(r.PathValue("name"), body)
	if err != nil {
		WriteError(w, err)
		return
	}
	out, created, err := h.Batch.CreateEndpoint(r.Context(), r.PathValue("ws"), e)
	if err != nil {
		WriteError(w, armbatch.Field(err))
		return
	}
	writeJSON(w, createdStatus(created), armbatch.ToBatchEndpointResource(scopeOf(r), h.batchBase(r), out))
}

// DeleteBatchEndpoint is DELETE …/batchEndpoints/{name}.
func (h Handlers) DeleteBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		WriteError(w, err)
		return
	}
	deleted(w, h.Batch.DeleteEndpoint(r.Context(), r.PathValue("ws"), r.PathValue("name")))
}

// ListBatchDeployments is GET …/batchEndpoints/{name}/deployments.
func (h Handlers) ListBatchDeployments(w http.ResponseWriter, r *http.Request) {
	list, err := h.Batch.ListDeployments(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*armbatch.DeploymentResource, 0, len(list))
	for _, d := range list {
		out = append(out, armbatch.ToBatchDeploymentResource(scopeOf(r), d))
	}
	writeList(w, out, "")
}

// GetBatchDeployment is GET …/batchEndpoints/{name}/deployments/{dep}.
func (h Handlers) GetBatchDeployment(w http.ResponseWriter, r *http.Request) {
	d, err := h.Batch.GetDeployment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("dep"))
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, armbatch.ToBatchDeploymentResource(scopeOf(r), d))
}

// PutBatchDeployment is PUT …/batchEndpoints/{name}/deployments/{dep}:
// its codeId (a code version, as azure-ai-ml registers it) resolved to
// the code's artifact.
func (h Handlers) PutBatchDeployment(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	ws := r.PathValue("ws")
	code := func(codeID string) (string, error) {
		if h.Codes == nil {
			return "", core.FieldErrorf("properties.codeConfiguration.codeId", "this server keeps no code assets")
		}
		return h.Codes.CodeArtifact(r.Context(), ws, codeID)
	}
	d, err := armbatch.FromBatchDeploymentResource(ws, r.PathValue("name"), r.PathValue("dep"), body, code)
	if err != nil {
		WriteError(w, err)
		return
	}
	out, created, err := h.Batch.CreateDeployment(r.Context(), ws, d, false)
	if err != nil {
		WriteError(w, armbatch.Field(err))
		return
	}
	writeJSON(w, createdStatus(created), armbatch.ToBatchDeploymentResource(scopeOf(r), out))
}

// DeleteBatchDeployment is DELETE …/batchEndpoints/{name}/deployments/{dep}.
func (h Handlers) DeleteBatchDeployment(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		WriteError(w, err)
		return
	}
	deleted(w, h.Batch.DeleteDeployment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("dep")))
}

// batchJobBody is what ml_client.batch_endpoints.invoke POSTs to the
// scoring URI: a BatchJobResource (2020-09-01-dataplanepreview) whose
// inputData has one input (keyed UriFolder, UriFile or the caller's
// name), the deployment in the azureml-model-deployment header.
type batchJobBody struct {
	Properties struct {
		Name      string `json:"name"`
		InputData map[string]struct {
			JobInputType string `json:"jobInputType"`
			URI          string `json:"uri"`
		} `json:"inputData"`
		OutputDataset *struct {
			DatastoreID string `json:"datastoreId"`
			Path        string `json:"path"`
		} `json:"outputDataset"`
	} `json:"properties"`
}

// ScoreBatchEndpoint is POST on an endpoint's scoring URI: Azure's
// invocation, answered with the job as a BatchJobResource.
func (h Handlers) ScoreBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	var body batchJobBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		WriteError(w, core.FieldErrorf("properties", "is not a BatchJobResource's body (%s)", core.Short(err.Error())))
		return
	}
	ws := r.PathValue("ws")
	if len(body.Properties.InputData) != 1 {
		WriteError(w, core.FieldErrorf("properties.inputData", "must hold one input (the data to score), got %d", len(body.Properties.InputData)))
		return
	}
	inv := &batch.Invocation{DeploymentName: r.Header.Get("azureml-model-deployment"), JobName: body.Properties.Name}
	for key, in := range body.Properties.InputData {
		t := strings.ToLower(in.JobInputType)
		if t == "" {
			t = strings.ToLower(key)
		}
		switch t {
		case "urifolder", jobio.TypeURIFolder:
			inv.Input.Type = jobio.TypeURIFolder
		case "urifile", jobio.TypeURIFile:
			inv.Input.Type = jobio.TypeURIFile
		case "mltable":
			inv.Input.Type = jobio.TypeMLTable
		default:
			WriteError(w, core.FieldErrorf("properties.inputData."+key+".jobInputType", "%q must be UriFolder, UriFile or MLTable", core.Short(in.JobInputType)))
			return
		}
		uri, err := armjob.AssetRef("properties.inputData."+key+".uri", ws, "data", in.URI)
		if err != nil {
			WriteError(w, err)
			return
		}
		inv.Input.Path = uri
	}
	if o := body.Properties.OutputDataset; o != nil && o.DatastoreID != "" {
		name := o.DatastoreID
		if i := strings.LastIndex(name, "/datastores/"); i >= 0 {
			name = name[i+len("/datastores/"):]
		}
		inv.OutputPath = "azureml://datastores/" + strings.TrimPrefix(name, "azureml:") + "/paths/" + strings.TrimPrefix(o.Path, "/")
	}
	j, err := h.Batch.Invoke(r.Context(), ws, r.PathValue("name"), inv)
	if err != nil {
		WriteError(w, err)
		return
	}
	outputFile := ""
	if j.Parallel != nil {
		outputFile = j.Parallel.AppendRowFile
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": j.ID, "name": j.Name, "type": "Microsoft.MachineLearningServices/workspaces/jobs",
		"properties": map[string]any{"status": j.Status, "name": j.Name, "description": j.Description, "tags": j.Tags,
			"outputFileName": outputFile, "provisioningState": "Succeeded"},
	})
}

// batchBase is the server's URL as the request reached it, that an
// endpoint's scoring URI starts with.
func (h Handlers) batchBase(r *http.Request) string {
	u := serverURL(h.Svc.PublicURL(), r)
	u.Path, u.RawQuery = "", ""
	return u.String()
}

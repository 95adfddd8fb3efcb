package armjob

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// ComputeRef turns a computeId (an ARM id, azureml:<name> or a name) of
// workspace ws into a compute's name, refusing another workspace's; for
// resources other than jobs that name a compute (batch deployments).
func ComputeRef(field, ws, id string) (string, error) { return computeRef(field, ws, id) }

// AssetRef turns an asset id of collection (an ARM id of a version or a
// container, azureml:<name>:<version>, azureml:<name>@<label>) into the
// reference a job document takes, refusing another workspace's; for
// resources other than jobs that name an asset (batch deployments,
// invocations).
func AssetRef(field, ws, collection, id string) (string, error) {
	return assetRef(field, ws, collection, id)
}

// JobRef turns a job's id (an ARM id, azureml:<name> or a name) of
// workspace ws into the job's name, refusing another workspace's job; for
// resources that name an existing job (a schedule's sourceJobId).
func JobRef(field, ws, id string) (string, error) {
	if ref, ok := parseARMID(id); ok {
		if err := ownRef(field, ws, "jobs", ref); err != nil {
			return "", err
		}
		if ref.version != "" {
			return "", core.FieldErrorf(field, "%q is not the id of a job", core.Short(id))
		}
		return ref.name, nil
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(id)), "/subscriptions/") || strings.Contains(id, "/") {
		return "", core.FieldErrorf(field, "%q is not the ARM id of a job (…/workspaces/<ws>/jobs/<name>)", core.Short(id))
	}
	return strings.TrimPrefix(strings.TrimSpace(id), "azureml:"), nil
}

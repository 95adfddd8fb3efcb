package armjob

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

package store

import "github.com/shoal-ml/shoal/domain/batch"

// BatchTx is the part of Tx that keeps batch endpoints and their
// deployments (names compared case-insensitively).
type BatchTx interface {
	// PutBatchEndpoint creates a workspace's batch endpoint or replaces
	// the one of the same name; a zero CreatedOn takes the transaction
	// time.
	PutBatchEndpoint(e *batch.Endpoint) error
	// GetBatchEndpoint returns a batch endpoint. Returns ENOTFOUND.
	GetBatchEndpoint(workspace, name string) (*batch.Endpoint, error)
	// ListBatchEndpoints returns a workspace's batch endpoints ordered
	// by name.
	ListBatchEndpoints(workspace string) ([]*batch.Endpoint, error)
	// DeleteBatchEndpoint removes a batch endpoint and its deployments.
	// Returns ENOTFOUND.
	DeleteBatchEndpoint(workspace, name string) error
	// PutBatchDeployment creates an endpoint's deployment or replaces the
	// one of the same name; a zero CreatedOn takes the transaction time.
	// The caller checks that the endpoint exists.
	PutBatchDeployment(d *batch.Deployment) error
	// GetBatchDeployment returns an endpoint's deployment. Returns
	// ENOTFOUND.
	GetBatchDeployment(workspace, endpoint, name string) (*batch.Deployment, error)
	// ListBatchDeployments returns an endpoint's deployments ordered by
	// name.
	ListBatchDeployments(workspace, endpoint string) ([]*batch.Deployment, error)
	// DeleteBatchDeployment removes an endpoint's deployment. Returns
	// ENOTFOUND.
	DeleteBatchDeployment(workspace, endpoint, name string) error
}

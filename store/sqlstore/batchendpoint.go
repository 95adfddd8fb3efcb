package sqlstore

import (
	"database/sql"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/store/sqlstore/batchstore"
)

// Batch endpoints and deployments: the queries are package batchstore's;
// these methods check that the transaction may write and hand it over.

// querier is a transaction as batchstore.Querier.
type querier struct{ t *tx }

// Exec runs a statement in the transaction.
func (q querier) Exec(query string, args ...any) (sql.Result, error) { return q.t.exec(query, args...) }

// Query runs a query in the transaction.
func (q querier) Query(query string, args ...any) (*sql.Rows, error) {
	return q.t.query(query, args...)
}

// QueryRow runs a query of one row in the transaction.
func (q querier) QueryRow(query string, args ...any) *sql.Row { return q.t.queryRow(query, args...) }

// PutBatchEndpoint creates or replaces a batch endpoint.
func (t *tx) PutBatchEndpoint(e *batch.Endpoint) error {
	if err := t.writable("put batch endpoint"); err != nil {
		return err
	}
	return batchstore.PutEndpoint(querier{t}, e, t.now)
}

// GetBatchEndpoint returns a batch endpoint. Returns ENOTFOUND.
func (t *tx) GetBatchEndpoint(workspace, name string) (*batch.Endpoint, error) {
	return batchstore.GetEndpoint(querier{t}, workspace, name)
}

// ListBatchEndpoints returns a workspace's batch endpoints by name.
func (t *tx) ListBatchEndpoints(workspace string) ([]*batch.Endpoint, error) {
	return batchstore.ListEndpoints(querier{t}, workspace)
}

// DeleteBatchEndpoint removes a batch endpoint and its deployments.
func (t *tx) DeleteBatchEndpoint(workspace, name string) error {
	if err := t.writable("delete batch endpoint"); err != nil {
		return err
	}
	return batchstore.DeleteEndpoint(querier{t}, workspace, name)
}

// PutBatchDeployment creates or replaces a batch deployment.
func (t *tx) PutBatchDeployment(d *batch.Deployment) error {
	if err := t.writable("put batch deployment"); err != nil {
		return err
	}
	return batchstore.PutDeployment(querier{t}, d, t.now)
}

// GetBatchDeployment returns an endpoint's deployment. Returns ENOTFOUND.
func (t *tx) GetBatchDeployment(workspace, endpoint, name string) (*batch.Deployment, error) {
	return batchstore.GetDeployment(querier{t}, workspace, endpoint, name)
}

// ListBatchDeployments returns an endpoint's deployments by name.
func (t *tx) ListBatchDeployments(workspace, endpoint string) ([]*batch.Deployment, error) {
	return batchstore.ListDeployments(querier{t}, workspace, endpoint)
}

// DeleteBatchDeployment removes an endpoint's deployment. Returns ENOTFOUND.
func (t *tx) DeleteBatchDeployment(workspace, endpoint, name string) error {
	if err := t.writable("delete batch deployment"); err != nil {
		return err
	}
	return batchstore.DeleteDeployment(querier{t}, workspace, endpoint, name)
}

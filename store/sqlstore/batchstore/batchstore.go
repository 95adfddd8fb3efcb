// Package batchstore holds the queries of batch endpoints and
// deployments (migration 0036), for both SQL stores: package sqlstore's
// transaction methods delegate here through Querier, so that its own
// package does not grow. Each row is a JSON document of the YAML's keys
// beside the lower-cased keys it is found by.
package batchstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Querier is what the queries need of a transaction.
type Querier interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

func key(s string) string { return strings.ToLower(s) }

// stored is a time as the stores keep it: microseconds, in UTC.
func stored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// PutEndpoint creates or replaces a workspace's endpoint; a zero
// CreatedOn takes now.
func PutEndpoint(q Querier, e *batch.Endpoint, now time.Time) error {
	if e.CreatedOn.IsZero() {
		e.CreatedOn = now
	}
	e.CreatedOn = stored(e.CreatedOn)
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: encode batch endpoint %s: %w", e.Name, err)
	}
	if _, err := q.Exec(`INSERT INTO batch_endpoints (workspace_key, name_key, workspace, doc) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_key, name_key) DO UPDATE SET workspace = excluded.workspace, doc = excluded.doc`,
		key(e.Workspace), key(e.Name), e.Workspace, string(doc)); err != nil {
		return fmt.Errorf("store: put batch endpoint %s in %s: %w", e.Name, e.Workspace, err)
	}
	return nil
}

// Scanner is a row to scan (*sql.Row, *sql.Rows).
type Scanner = sqlq.Scanner

func scanEndpoint(sc Scanner) (*batch.Endpoint, error) {
	var (
		ws  string
		doc []byte
		e   batch.Endpoint
	)
	if err := sc.Scan(&ws, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &e); err != nil {
		return nil, fmt.Errorf("decode batch endpoint: %w", err)
	}
	e.Workspace = ws
	return &e, nil
}

func scanDeployment(sc Scanner) (*batch.Deployment, error) {
	var (
		ws  string
		doc []byte
		d   batch.Deployment
	)
	if err := sc.Scan(&ws, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode batch deployment: %w", err)
	}
	d.Workspace = ws
	return &d, nil
}

// GetEndpoint returns a workspace's endpoint. Returns ENOTFOUND.
func GetEndpoint(q Querier, workspace, name string) (*batch.Endpoint, error) {
	e, err := scanEndpoint(q.QueryRow(`SELECT workspace, doc FROM batch_endpoints WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("batch endpoint %s is not in workspace %s; see `shoal batch-endpoint list`", name, workspace)}
	}
	if err != nil {
		return nil, fmt.Errorf("store: get batch endpoint %s in %s: %w", name, workspace, err)
	}
	return e, nil
}

// ListEndpoints returns a workspace's endpoints ordered by name.
func ListEndpoints(q Querier, workspace string) ([]*batch.Endpoint, error) {
	rows, err := q.Query(`SELECT workspace, doc FROM batch_endpoints WHERE workspace_key = $1 ORDER BY name_key`, key(workspace))
	if err != nil {
		return nil, fmt.Errorf("store: list batch endpoints of %s: %w", workspace, err)
	}
	return Collect(rows, scanEndpoint)
}

// DeleteEndpoint removes an endpoint and its deployments. Returns
// ENOTFOUND.
func DeleteEndpoint(q Querier, workspace, name string) error {
	res, err := q.Exec(`DELETE FROM batch_endpoints WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name))
	if err != nil {
		return fmt.Errorf("store: delete batch endpoint %s in %s: %w", name, workspace, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("batch endpoint %s is not in workspace %s", name, workspace)}
	}
	if _, err := q.Exec(`DELETE FROM batch_deployments WHERE workspace_key = $1 AND endpoint_key = $2`, key(workspace), key(name)); err != nil {
		return fmt.Errorf("store: delete the deployments of batch endpoint %s in %s: %w", name, workspace, err)
	}
	return nil
}

// PutDeployment creates or replaces an endpoint's deployment; a zero
// CreatedOn takes now. The caller checks that the endpoint exists.
func PutDeployment(q Querier, d *batch.Deployment, now time.Time) error {
	if d.CreatedOn.IsZero() {
		d.CreatedOn = now
	}
	d.CreatedOn = stored(d.CreatedOn)
	doc, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("store: encode batch deployment %s: %w", d.Name, err)
	}
	if _, err := q.Exec(`INSERT INTO batch_deployments (workspace_key, endpoint_key, name_key, workspace, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_key, endpoint_key, name_key) DO UPDATE SET workspace = excluded.workspace, doc = excluded.doc`,
		key(d.Workspace), key(d.EndpointName), key(d.Name), d.Workspace, string(doc)); err != nil {
		return fmt.Errorf("store: put batch deployment %s of %s in %s: %w", d.Name, d.EndpointName, d.Workspace, err)
	}
	return nil
}

// GetDeployment returns an endpoint's deployment. Returns ENOTFOUND.
func GetDeployment(q Querier, workspace, endpoint, name string) (*batch.Deployment, error) {
	d, err := scanDeployment(q.QueryRow(`SELECT workspace, doc FROM batch_deployments WHERE workspace_key = $1 AND endpoint_key = $2 AND name_key = $3`,
		key(workspace), key(endpoint), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &core.Error{Code: core.ENOTFOUND, Field: "deployment_name", Message: fmt.Sprintf("batch endpoint %s has no deployment %s; see `shoal batch-deployment list --endpoint-name %s`", endpoint, name, endpoint)}
	}
	if err != nil {
		return nil, fmt.Errorf("store: get batch deployment %s of %s in %s: %w", name, endpoint, workspace, err)
	}
	return d, nil
}

// ListDeployments returns an endpoint's deployments ordered by name.
func ListDeployments(q Querier, workspace, endpoint string) ([]*batch.Deployment, error) {
	rows, err := q.Query(`SELECT workspace, doc FROM batch_deployments WHERE workspace_key = $1 AND endpoint_key = $2 ORDER BY name_key`, key(workspace), key(endpoint))
	if err != nil {
		return nil, fmt.Errorf("store: list batch deployments of %s in %s: %w", endpoint, workspace, err)
	}
	return Collect(rows, scanDeployment)
}

// DeleteDeployment removes an endpoint's deployment. Returns ENOTFOUND.
func DeleteDeployment(q Querier, workspace, endpoint, name string) error {
	res, err := q.Exec(`DELETE FROM batch_deployments WHERE workspace_key = $1 AND endpoint_key = $2 AND name_key = $3`, key(workspace), key(endpoint), key(name))
	if err != nil {
		return fmt.Errorf("store: delete batch deployment %s of %s in %s: %w", name, endpoint, workspace, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("batch endpoint %s has no deployment %s", endpoint, name)}
	}
	return nil
}

// Collect scans every row into a list (empty, never nil), closing rows.
func Collect[T any](rows *sql.Rows, scan func(Scanner) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, scan)
}

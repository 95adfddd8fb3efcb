package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// optMicros stores a time, the zero time as 0.
func optMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return sqlq.Micros(t)
}

// fromOptMicros reads what optMicros stored.
func fromOptMicros(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return sqlq.FromMicros(v)
}

// GetInstanceLive returns an instance's live state. Returns ENOTFOUND.
func (t *tx) GetInstanceLive(workspace, compute string) (*node.InstanceLive, error) {
	l := &node.InstanceLive{}
	var report string
	var at, proxy int64
	err := t.queryRow(`SELECT workspace, compute, node, report, reported_at, proxy_last FROM instance_live
		WHERE workspace_key = $1 AND compute_key = $2`, key(workspace), key(compute)).
		Scan(&l.Workspace, &l.Compute, &l.Node, &report, &at, &proxy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no live state of instance %s/%s", workspace, compute)
	} else if err != nil {
		return nil, fmt.Errorf("store: get live state of %s/%s: %w", workspace, compute, err)
	}
	if report != "" {
		l.Report = &node.InstanceReport{}
		if err := json.Unmarshal([]byte(report), l.Report); err != nil {
			return nil, fmt.Errorf("store: live state of %s/%s: decode the report: %w", workspace, compute, err)
		}
	}
	l.ReportedAt, l.ProxyLastRequest = fromOptMicros(at), fromOptMicros(proxy)
	return l, nil
}

// PutInstanceReport stores l's report unless a newer one is stored, and
// reports whether it wrote. The proxy time stays.
func (t *tx) PutInstanceReport(l *node.InstanceLive) (bool, error) {
	if err := t.writable("put instance report"); err != nil {
		return false, err
	}
	report := ""
	if l.Report != nil {
		r := *l.Report
		r.SSHLogins = nil // the audit log's, not state
		b, err := json.Marshal(&r)
		if err != nil {
			return false, fmt.Errorf("store: put report of %s/%s: %w", l.Workspace, l.Compute, err)
		}
		report = string(b)
	}
	res, err := t.exec(`INSERT INTO instance_live (workspace_key, compute_key, workspace, compute, node, report, reported_at, proxy_last)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0)
		ON CONFLICT (workspace_key, compute_key) DO UPDATE SET workspace = excluded.workspace, compute = excluded.compute,
			node = excluded.node, report = excluded.report, reported_at = excluded.reported_at
		WHERE instance_live.reported_at <= excluded.reported_at`,
		key(l.Workspace), key(l.Compute), l.Workspace, l.Compute, l.Node, report, optMicros(l.ReportedAt))
	if err != nil {
		return false, fmt.Errorf("store: put report of %s/%s: %w", l.Workspace, l.Compute, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: put report of %s/%s: %w", l.Workspace, l.Compute, err)
	}
	normTime(&l.ReportedAt)
	return n > 0, nil
}

// TouchInstanceProxy moves an instance's last proxied request forward to
// at.
func (t *tx) TouchInstanceProxy(workspace, compute string, at time.Time) error {
	if err := t.writable("touch instance proxy"); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO instance_live (workspace_key, compute_key, workspace, compute, node, report, reported_at, proxy_last)
		VALUES ($1, $2, $3, $4, '', '', 0, $5)
		ON CONFLICT (workspace_key, compute_key) DO UPDATE SET proxy_last = excluded.proxy_last
		WHERE instance_live.proxy_last < excluded.proxy_last`,
		key(workspace), key(compute), workspace, compute, optMicros(at)); err != nil {
		return fmt.Errorf("store: touch proxy of %s/%s: %w", workspace, compute, err)
	}
	return nil
}

// DeleteInstanceLive removes an instance's live state.
func (t *tx) DeleteInstanceLive(workspace, compute string) error {
	if err := t.writable("delete instance live state"); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM instance_live WHERE workspace_key = $1 AND compute_key = $2`, key(workspace), key(compute)); err != nil {
		return fmt.Errorf("store: delete live state of %s/%s: %w", workspace, compute, err)
	}
	return nil
}

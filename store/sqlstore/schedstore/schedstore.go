// Package schedstore holds the queries of job schedules (migration 0037),
// for both SQL stores: package sqlstore's transaction methods delegate
// here through Querier, so that its own package does not grow. Each row
// is the schedule as a JSON document beside the lower-cased keys it is
// found by.
package schedstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/store/sqlstore/batchstore"
)

// Querier is what the queries need of a transaction, as batchstore's.
type Querier = batchstore.Querier

// micro is a time as the stores keep it: microseconds, in UTC.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// Put creates or replaces a workspace's schedule; a zero CreatedOn takes
// now. NextFireTime is computed on read, never stored.
func Put(q Querier, s *schedule.JobSchedule, now time.Time) error {
	if s.CreatedOn.IsZero() {
		s.CreatedOn = now
	}
	s.CreatedOn = micro(s.CreatedOn)
	if !s.UpdatedOn.IsZero() {
		s.UpdatedOn = micro(s.UpdatedOn)
	}
	if s.Status.LastFireTime != nil {
		t := micro(*s.Status.LastFireTime)
		s.Status.LastFireTime = &t
	}
	c := *s
	c.Status.NextFireTime = nil
	doc, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("store: encode job schedule %s: %w", s.Name, err)
	}
	if _, err := q.Exec(`INSERT INTO job_schedules (workspace_key, name_key, workspace, doc) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_key, name_key) DO UPDATE SET workspace = excluded.workspace, doc = excluded.doc`,
		strings.ToLower(s.Workspace), strings.ToLower(s.Name), s.Workspace, string(doc)); err != nil {
		return fmt.Errorf("store: put job schedule %s in %s: %w", s.Name, s.Workspace, err)
	}
	return nil
}

func scan(sc batchstore.Scanner) (*schedule.JobSchedule, error) {
	var doc []byte
	s := &schedule.JobSchedule{}
	if err := sc.Scan(&s.Workspace, &doc); err != nil {
		return nil, err
	}
	ws := s.Workspace
	if err := json.Unmarshal(doc, s); err != nil {
		return nil, fmt.Errorf("decode job schedule: %w", err)
	}
	s.Workspace = ws
	return s, nil
}

// Get returns a workspace's schedule. Returns ENOTFOUND.
func Get(q Querier, workspace, name string) (*schedule.JobSchedule, error) {
	s, err := scan(q.QueryRow(`SELECT workspace, doc FROM job_schedules WHERE workspace_key = $1 AND name_key = $2`, strings.ToLower(workspace), strings.ToLower(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(workspace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get job schedule %s in %s: %w", name, workspace, err)
	}
	return s, nil
}

// List returns a workspace's schedules ordered by name; workspace ""
// lists every workspace's, ordered by workspace then name.
func List(q Querier, workspace string) ([]*schedule.JobSchedule, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if workspace == "" {
		rows, err = q.Query(`SELECT workspace, doc FROM job_schedules ORDER BY workspace_key, name_key`)
	} else {
		rows, err = q.Query(`SELECT workspace, doc FROM job_schedules WHERE workspace_key = $1 ORDER BY name_key`, strings.ToLower(workspace))
	}
	if err != nil {
		return nil, fmt.Errorf("store: list job schedules of %q: %w", workspace, err)
	}
	return batchstore.Collect(rows, scan)
}

// Delete removes a schedule. Returns ENOTFOUND.
func Delete(q Querier, workspace, name string) error {
	res, err := q.Exec(`DELETE FROM job_schedules WHERE workspace_key = $1 AND name_key = $2`, strings.ToLower(workspace), strings.ToLower(name))
	if err != nil {
		return fmt.Errorf("store: delete job schedule %s in %s: %w", name, workspace, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return notFound(workspace, name)
	}
	return nil
}

func notFound(workspace, name string) error {
	return &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("schedule %s is not in workspace %s; see `shoal schedule list`", name, workspace)}
}

package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/entitydoc"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// attemptColumns are the columns scanAttempt reads, in order.
const attemptColumns = `workspace, doc`

func scanAttempt(sc scanner) (*job.Attempt, error) {
	var (
		a   job.Attempt
		doc []byte
	)
	if err := sc.Scan(&a.Workspace, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &a); err != nil {
		return nil, fmt.Errorf("decode attempt %q: %w", a.ID, err)
	}
	return &a, nil
}

// GetAttempt returns an attempt by ID. Returns ENOTFOUND.
func (t *tx) GetAttempt(id string) (*job.Attempt, error) {
	a, err := scanAttempt(t.queryRow(`SELECT `+attemptColumns+` FROM attempts WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "attempt %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("store: get attempt %q: %w", id, err)
	}
	return a, nil
}

// queryAttemptWithJob reads an attempt and its job (attemptColumns,
// jobColumns).
var queryAttemptWithJob = `SELECT ` + sqlq.Qualify("a", attemptColumns) + `, ` + sqlq.Qualify("j", jobColumns) + `
	FROM attempts a JOIN jobs j ON j.workspace_key = a.workspace_key AND j.name = a.job_name WHERE a.id = $1`

// GetAttemptWithJob returns an attempt by ID and its job, in one
// statement. Returns ENOTFOUND, with GetAttempt's message for the
// attempt and GetJob's for the job.
func (t *tx) GetAttemptWithJob(id string) (a *job.Attempt, j *job.Job, err error) {
	err = sqlq.ScanJoined(t.queryRow(queryAttemptWithJob, id), sqlq.Into(&a, scanAttempt), sqlq.Into(&j, scanJob))
	if errors.Is(err, sql.ErrNoRows) {
		// One is missing: the reads one by one say which.
		if a, err = t.GetAttempt(id); err != nil {
			return nil, nil, err
		}
		if j, err = t.GetJob(a.Workspace, a.JobName); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, fmt.Errorf("store: get attempt %q with its job: %w", id, err)
	}
	return a, j, nil
}

// queryNodeWork reads a node, an attempt and the attempt's job in one row
// (nodeColumns, attemptColumns, jobColumns).
var queryNodeWork = `SELECT ` + sqlq.Qualify("n", nodeColumns) + `, ` + sqlq.Qualify("a", attemptColumns) + `, ` + sqlq.Qualify("j", jobColumns) + `
	FROM nodes n JOIN attempts a ON a.id = $2 JOIN jobs j ON j.workspace_key = a.workspace_key AND j.name = a.job_name
	WHERE n.id = $1`

// GetNodeWork returns a node, an attempt and its job, in one statement.
// Returns ENOTFOUND when any is missing.
func (t *tx) GetNodeWork(nodeID, attemptID string) (n *node.Node, a *job.Attempt, j *job.Job, err error) {
	err = sqlq.ScanJoined(t.queryRow(queryNodeWork, nodeID, attemptID), sqlq.Into(&n, scanNode), sqlq.Into(&a, scanAttempt), sqlq.Into(&j, scanJob))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, core.Errorf(core.ENOTFOUND, "node %q, attempt %q or its job not found", nodeID, attemptID)
	} else if err != nil {
		return nil, nil, nil, fmt.Errorf("store: get node %q with attempt %q: %w", nodeID, attemptID, err)
	}
	return n, a, j, nil
}

// queryListAttempts is the query of ListAttempts.
const queryListAttempts = `SELECT ` + attemptColumns + ` FROM attempts WHERE workspace_key = $1 AND job_name = $2 ORDER BY number, id`

// ListAttempts returns the attempts of a job (workspace compared
// case-insensitively, job name exactly) ordered by Number, then ID.
func (t *tx) ListAttempts(workspace, jobName string) ([]*job.Attempt, error) {
	rows, err := t.query(queryListAttempts, key(workspace), jobName)
	if err != nil {
		return nil, fmt.Errorf("store: list attempts of job %s/%s: %w", workspace, jobName, err)
	}
	out, err := collect(rows, scanAttempt)
	if err != nil {
		return nil, fmt.Errorf("store: list attempts of job %s/%s: %w", workspace, jobName, err)
	}
	return out, nil
}

// InsertAttempt adds an attempt; a zero CreatedOn takes the transaction
// time. Returns ECONFLICT if the ID exists.
func (t *tx) InsertAttempt(a *job.Attempt) error {
	if err := t.writable("insert attempt"); err != nil {
		return err
	}
	if a.CreatedOn.IsZero() {
		a.CreatedOn = t.now
	}
	doc, err := entitydoc.EncodeAttempt(a)
	if err != nil {
		return fmt.Errorf("store: insert attempt %q: %w", a.ID, err)
	}
	res, err := t.exec(`INSERT INTO attempts (id, workspace, workspace_key, job_name, number, status, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO NOTHING`,
		a.ID, a.Workspace, key(a.Workspace), a.JobName, int64(a.Number), a.Status, doc)
	if err != nil {
		return fmt.Errorf("store: insert attempt %q: %w", a.ID, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert attempt %q: %w", a.ID, err)
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "attempt %q already exists", a.ID)
	}
	return nil
}

// UpdateAttempt replaces the stored attempt of a's ID with a as written.
// Returns ENOTFOUND.
func (t *tx) UpdateAttempt(a *job.Attempt) error {
	if err := t.writable("update attempt"); err != nil {
		return err
	}
	doc, err := entitydoc.EncodeAttempt(a)
	if err != nil {
		return fmt.Errorf("store: update attempt %q: %w", a.ID, err)
	}
	n, err := t.update(
		// The job and number of an attempt do not change: then no index
		// entry moves.
		`UPDATE attempts SET workspace = $2, status = $3, doc = $4
		WHERE id = $1 AND workspace_key = $5 AND job_name = $6 AND number = $7`,
		`UPDATE attempts SET workspace = $2, status = $3, doc = $4, workspace_key = $5, job_name = $6, number = $7
		WHERE id = $1`,
		a.ID, a.Workspace, a.Status, doc, key(a.Workspace), a.JobName, int64(a.Number))
	if err != nil {
		return fmt.Errorf("store: update attempt %q: %w", a.ID, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "attempt %q not found", a.ID)
	}
	return nil
}

package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/entitydoc"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// jobColumns are the columns scanJob reads, in order.
const jobColumns = `workspace, seq, spec_hash, version, doc`

func scanJob(sc scanner) (*job.Job, error) {
	var (
		j   job.Job
		doc []byte
	)
	if err := sc.Scan(&j.Workspace, &j.Seq, &j.SpecHash, &j.Version, &doc); err != nil {
		return nil, err
	}
	// Decoding leaves the json:"-" fields just scanned alone.
	if err := json.Unmarshal(doc, &j); err != nil {
		return nil, fmt.Errorf("decode job %q: %w", j.Name, err)
	}
	return &j, nil
}

// queryGetJob is the query of GetJob.
const queryGetJob = `SELECT ` + jobColumns + ` FROM jobs WHERE workspace_key = $1 AND name = $2`

// GetJob returns a job by workspace (compared case-insensitively) and exact
// name. Returns ENOTFOUND.
func (t *tx) GetJob(workspace, name string) (*job.Job, error) {
	j, err := scanJob(t.queryRow(queryGetJob, key(workspace), name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "job %q not found in workspace %q", name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get job %s/%s: %w", workspace, name, err)
	}
	return j, nil
}

// ListJobs returns the jobs matching filter, newest (highest Seq) first. An
// empty filter.Workspace means every workspace; an empty Statuses any
// status; Limit <= 0 no limit.
func (t *tx) ListJobs(filter job.JobFilter) ([]*job.Job, error) {
	q, args := listJobsQuery(filter)
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list jobs of %q: %w", filter.Workspace, err)
	}
	out, err := collect(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("store: list jobs of %q: %w", filter.Workspace, err)
	}
	return out, nil
}

// listJobsQuery returns the query of ListJobs and its arguments. Its text
// depends only on which filters are set and on the number of statuses.
func listJobsQuery(filter job.JobFilter) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if filter.Workspace != "" {
		where = append(where, `workspace_key = `+arg(key(filter.Workspace)))
	}
	if filter.Compute != "" {
		where = append(where, `compute_key = `+arg(key(filter.Compute)))
	}
	switch len(filter.Statuses) {
	case 0:
	case 1:
		where = append(where, `status = `+arg(filter.Statuses[0]))
	default:
		ph := make([]string, len(filter.Statuses))
		for i, s := range filter.Statuses {
			ph[i] = arg(s)
		}
		where = append(where, `status IN (`+strings.Join(ph, `, `)+`)`)
	}
	q := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY seq DESC, workspace_key DESC, name DESC`
	if filter.Limit > 0 {
		q += ` LIMIT ` + arg(int64(filter.Limit))
	}
	return q, args
}

// queryQueuedJobs is the query of ListQueuedJobs; $1 is shoal.JobQueued.
const queryQueuedJobs = `SELECT ` + jobColumns + ` FROM jobs WHERE status = $1 ORDER BY priority DESC, seq`

// ListQueuedJobs returns the jobs in status Queued of every workspace, by
// priority descending then Seq ascending, in the order of index jobs_queue.
func (t *tx) ListQueuedJobs() ([]*job.Job, error) {
	rows, err := t.query(queryQueuedJobs, job.JobQueued)
	if err != nil {
		return nil, fmt.Errorf("store: list queued jobs: %w", err)
	}
	out, err := collect(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("store: list queued jobs: %w", err)
	}
	return out, nil
}

// queryQueueDemand sums the queued node demand per compute, from the
// covering index jobs_queue_by_compute.
const queryQueueDemand = `SELECT workspace_key, compute_key, nodes FROM queue_demand WHERE jobs > 0`

// queryQueueHead reads the first jobs of one compute's queue, a range of
// the index jobs_queue_by_compute.
const queryQueueHead = `SELECT ` + sqlq.RefColumns + ` FROM jobs
	WHERE status = $1 AND workspace_key = $2 AND compute_key = $3 ORDER BY priority DESC, seq LIMIT $4`

// ListQueueHeads returns the first headLen(key) queued jobs of every
// compute (in queue order) and the node demand of each compute's whole
// queue, which triggers keep in the table queue_demand.
func (t *tx) ListQueueHeads(headLen func(key string) int) ([]store.QueuedJobRef, map[string]int, error) {
	rows, err := t.query(queryQueueDemand)
	if err != nil {
		return nil, nil, fmt.Errorf("store: queue demand: %w", err)
	}
	demand := map[string]int{}
	var computes [][2]string
	for rows.Next() {
		var ws, comp string
		var sum int64
		if err := rows.Scan(&ws, &comp, &sum); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("store: queue demand: %w", err)
		}
		demand[ws+"/"+comp] = int(sum)
		computes = append(computes, [2]string{ws, comp})
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: queue demand: %w", err)
	}
	var out []store.QueuedJobRef
	for _, c := range computes {
		head, err := t.queueHead(c[0], c[1], max(1, headLen(c[0]+"/"+c[1])))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, head...)
	}
	// One queue order across computes: priority, then Seq.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		return out[i].Seq < out[j].Seq
	})
	return out, demand, nil
}

// ListQueueHead returns the first n queued jobs of one compute, in queue order.
func (t *tx) ListQueueHead(workspace, compute string, n int) ([]store.QueuedJobRef, error) {
	return t.queueHead(key(workspace), key(compute), n)
}

// ListQueueComputes returns the keys of the computes with queued jobs
// (queue_demand's), sorted.
func (t *tx) ListQueueComputes() ([]string, error) {
	rows, err := t.query(queryQueueDemand)
	if err != nil {
		return nil, fmt.Errorf("store: queue computes: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ws, comp string
		var sum int64
		if err := rows.Scan(&ws, &comp, &sum); err != nil {
			return nil, fmt.Errorf("store: queue computes: %w", err)
		}
		out = append(out, ws+"/"+comp)
	}
	slices.Sort(out)
	return out, rows.Err()
}

// PageComputeQueue implements store.Tx: queueHead's read with no bound
// worth the name, streamed a page at a time. The statement stays open
// while fn runs (on PostgreSQL an operator's statement_timeout counts
// fn's time too: docs/operations/stores.md). A compute's queue of 100,000
// jobs held at once, with the pass's copy of it for the scheduler, was
// most of what a whole-queue pass added to the server's heap.
func (t *tx) PageComputeQueue(workspace, compute string, size int, fn func(page []store.QueuedJobRef) error) error {
	workspaceKey, computeKey := key(workspace), key(compute)
	rows, err := t.query(queryQueueHead, job.JobQueued, workspaceKey, computeKey, int64(math.MaxInt))
	if err != nil {
		return fmt.Errorf("store: queue of %s/%s: %w", workspaceKey, computeKey, err)
	}
	defer rows.Close()
	size = max(size, 1)
	page := make([]store.QueuedJobRef, 0, min(size, 4096))
	var sc sqlq.RefScanner // a compute's whole queue repeats a few strings
	for rows.Next() {
		r, err := sc.Scan(rows)
		if err != nil {
			return fmt.Errorf("store: queue of %s/%s: %w", workspaceKey, computeKey, err)
		}
		if n := len(page); n >= size && (page[n-1].Priority != r.Priority || page[n-1].Seq != r.Seq) {
			if err := fn(page); err != nil {
				return err
			}
			clear(page) // what fn did not copy goes with the page
			page = page[:0]
		}
		page = append(page, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: queue of %s/%s: %w", workspaceKey, computeKey, err)
	}
	if len(page) > 0 {
		return fn(page)
	}
	return nil
}

// queueHead reads the first n queued jobs of a compute given by its keys.
func (t *tx) queueHead(workspaceKey, computeKey string, n int) ([]store.QueuedJobRef, error) {
	rows, err := t.query(queryQueueHead, job.JobQueued, workspaceKey, computeKey, int64(n))
	if err != nil {
		return nil, fmt.Errorf("store: queue head of %s/%s: %w", workspaceKey, computeKey, err)
	}
	defer rows.Close()
	var out []store.QueuedJobRef
	var sc sqlq.RefScanner // a compute's whole queue repeats a few strings
	for rows.Next() {
		r, err := sc.Scan(rows)
		if err != nil {
			return nil, fmt.Errorf("store: queue head of %s/%s: %w", workspaceKey, computeKey, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// queryQueueHeadJob reads the first job of one compute's queue, the same
// range of the index jobs_queue_by_compute as queryQueueHead, with the
// job's document (jobColumns last).
const queryQueueHeadJob = `SELECT name, compute_key, priority, instance_count, image, created_on, ` + jobColumns + ` FROM jobs
	WHERE status = $1 AND workspace_key = $2 AND compute_key = $3 ORDER BY priority DESC, seq LIMIT 1`

// QueueHeadJob returns the first queued job of one compute with its ref,
// in one statement (a hand-on read the ref, then the job); nil, nil, nil
// when the queue is empty.
func (t *tx) QueueHeadJob(workspace, compute string) (*store.QueuedJobRef, *job.Job, error) {
	var r store.QueuedJobRef
	var j *job.Job
	var prio, count, created int64
	err := sqlq.ScanJoined(t.queryRow(queryQueueHeadJob, job.JobQueued, key(workspace), key(compute)),
		sqlq.Columns(&r.Name, &r.ComputeKey, &prio, &count, &r.Image, &created), sqlq.Into(&j, scanJob))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("store: queue head of %s/%s: %w", workspace, compute, err)
	}
	r.Workspace, r.Seq = j.Workspace, j.Seq
	r.Priority, r.InstanceCount, r.CreatedOn = int(prio), int(count), sqlq.FromMicros(created)
	return &r, j, nil
}

// InsertJob adds a job; a zero CreatedOn takes the transaction time. Returns
// ECONFLICT if the workspace (compared case-insensitively) has a job of that
// exact name.
func (t *tx) InsertJob(j *job.Job) error {
	if err := t.writable("insert job"); err != nil {
		return err
	}
	if j.CreatedOn.IsZero() {
		j.CreatedOn = t.now
	}
	doc, err := entitydoc.EncodeJob(j)
	if err != nil {
		return fmt.Errorf("store: insert job %s/%s: %w", j.Workspace, j.Name, err)
	}
	res, err := t.exec(`INSERT INTO jobs (workspace_key, name, workspace, status, compute_key, priority, seq,
			created_on, spec_hash, version, doc, instance_count, image)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (workspace_key, name) DO NOTHING`,
		key(j.Workspace), j.Name, j.Workspace, j.Status, key(j.Compute), int64(j.PriorityValue()), j.Seq,
		sqlq.Micros(j.CreatedOn), j.SpecHash, j.Version, doc, int64(j.InstanceCount()), j.ResolvedImage())
	if err != nil {
		return fmt.Errorf("store: insert job %s/%s: %w", j.Workspace, j.Name, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert job %s/%s: %w", j.Workspace, j.Name, err)
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "job %q already exists in workspace %q", j.Name, j.Workspace)
	}
	return nil
}

// UpdateJob replaces the stored job of j's workspace and name with j as
// written. Returns ENOTFOUND.
func (t *tx) UpdateJob(j *job.Job) error {
	if err := t.writable("update job"); err != nil {
		return err
	}
	doc, err := entitydoc.EncodeJob(j)
	if err != nil {
		return fmt.Errorf("store: update job %s/%s: %w", j.Workspace, j.Name, err)
	}
	n, err := t.update(
		// Seq and the compute do not change after submission: when they are
		// as stored, only the index entries of status and priority move.
		`UPDATE jobs SET workspace = $3, status = $4, priority = $5, created_on = $6, spec_hash = $7,
			version = $8, doc = $9, image = $12
		WHERE workspace_key = $1 AND name = $2 AND compute_key = $10 AND seq = $11`,
		`UPDATE jobs SET workspace = $3, status = $4, priority = $5, created_on = $6, spec_hash = $7,
			version = $8, doc = $9, compute_key = $10, seq = $11, image = $12
		WHERE workspace_key = $1 AND name = $2`,
		key(j.Workspace), j.Name, j.Workspace, j.Status, int64(j.PriorityValue()), sqlq.Micros(j.CreatedOn), j.SpecHash,
		j.Version, doc, key(j.Compute), j.Seq, j.ResolvedImage())
	if err != nil {
		return fmt.Errorf("store: update job %s/%s: %w", j.Workspace, j.Name, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "job %q not found in workspace %q", j.Name, j.Workspace)
	}
	return nil
}

// NextSeq returns the next value of the named counter, starting at 1. The
// increment is part of the transaction.
func (t *tx) NextSeq(counter string) (int64, error) {
	if err := t.writable("next seq"); err != nil {
		return 0, err
	}
	return sqlq.NextSeq(querier{t}, counter)
}

package sqlq

import (
	"database/sql"

	"github.com/shoal-ml/shoal/store"
)

// RefColumns are the jobs' columns a RefScanner reads, in its order.
const RefColumns = `workspace, name, compute_key, priority, seq, instance_count, image, created_on`

// RefScanner reads rows of RefColumns as queued job refs, one string for
// each of the few workspaces, computes and images a long queue repeats.
// The zero value is ready to use; one scanner serves one query's rows.
type RefScanner struct {
	in          Interner
	ws, ck, img sql.RawBytes
}

// Scan reads the row rows is on.
func (sc *RefScanner) Scan(rows *sql.Rows) (store.QueuedJobRef, error) {
	var r store.QueuedJobRef
	var prio, count, created int64
	if err := rows.Scan(&sc.ws, &r.Name, &sc.ck, &prio, &r.Seq, &count, &sc.img, &created); err != nil {
		return r, err
	}
	r.Workspace, r.ComputeKey, r.Image = sc.in.Get(sc.ws), sc.in.Get(sc.ck), sc.in.Get(sc.img)
	r.Priority, r.InstanceCount, r.CreatedOn = int(prio), int(count), FromMicros(created)
	return r, nil
}

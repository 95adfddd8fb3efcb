package identstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/identity"
)

// AppendAudit adds r and sets r.ID, at once or, in a batch that defers
// its log rows (Queries.Log), when the batch writes them before it
// commits; a zero r.Time takes the transaction time.
func (t *Queries) AppendAudit(r *identity.AuditRecord) error {
	if err := t.Writable("append audit record"); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = t.Now
	}
	if t.Log != nil {
		normTime(&r.Time)
		t.Log.AddAudit(r)
		return nil
	}
	var id int64
	err := t.Q.QueryRow(`INSERT INTO audit_log (time, principal_id, action, target, workspace, source, outcome, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		micros(r.Time), r.PrincipalID, r.Action, r.Target, r.Workspace, r.Source, r.Outcome, r.Detail).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: append audit record of %s %s on %q: %w", r.PrincipalID, r.Action, r.Target, err)
	}
	r.ID = id
	normTime(&r.Time)
	return nil
}

// auditColumns are the columns scanAudit reads, in order.
const auditColumns = `id, time, principal_id, action, target, workspace, source, outcome, detail`

func scanAudit(sc scanner) (*identity.AuditRecord, error) {
	var r identity.AuditRecord
	var at int64
	if err := sc.Scan(&r.ID, &at, &r.PrincipalID, &r.Action, &r.Target, &r.Workspace, &r.Source, &r.Outcome, &r.Detail); err != nil {
		return nil, err
	}
	r.Time = fromMicros(at)
	return &r, nil
}

// ListAudit returns the audit records matching filter, oldest first: by
// time, then ID. Since matches records at or after it; PrincipalID matches
// exactly; Target matches a target exactly or any target under it
// ("computes/cpu" matches "computes/cpu/nodes/n1", not "computes/cpu2"),
// case-sensitively. Limit > 0 keeps the newest Limit records that match.
func (t *Queries) ListAudit(filter identity.AuditFilter) ([]*identity.AuditRecord, error) {
	// What this transaction appended is part of what it reads.
	if err := t.Log.FlushAudit(); err != nil {
		return nil, fmt.Errorf("store: list audit records: %w", err)
	}
	q, args := ListAuditQuery(filter)
	rows, err := t.Q.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list audit records: %w", err)
	}
	out, err := collect(rows, scanAudit)
	if err != nil {
		return nil, fmt.Errorf("store: list audit records: %w", err)
	}
	if filter.Limit > 0 {
		// The query read the newest first.
		slices.Reverse(out)
	}
	return out, nil
}

// ListAuditQuery returns the query of ListAudit and its arguments. Its text
// depends only on which filters are set. With a limit, it reads the newest
// records first. Ordering by time rather than ID lets the indexes on time
// serve both the order and a Since filter.
func ListAuditQuery(filter identity.AuditFilter) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !filter.Since.IsZero() {
		// Times are stored in whole microseconds: a record is at or after
		// Since when it is at or after Since rounded up.
		since := micros(filter.Since)
		if stored(filter.Since).Before(filter.Since) {
			since++
		}
		where = append(where, `time >= `+arg(since))
	}
	if filter.PrincipalID != "" {
		where = append(where, `principal_id = `+arg(filter.PrincipalID))
	}
	if filter.Target != "" {
		// A prefix test with substr rather than LIKE, whose wildcards would
		// need escaping and whose case-sensitivity differs between SQLite
		// and PostgreSQL; substr counts characters in both.
		prefix := filter.Target + "/"
		where = append(where, `(target = `+arg(filter.Target)+
			` OR substr(target, 1, `+arg(int64(utf8.RuneCountInString(prefix)))+`) = `+arg(prefix)+`)`)
	}
	q := `SELECT ` + auditColumns + ` FROM audit_log`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	if filter.Limit <= 0 {
		return q + ` ORDER BY time, id`, args
	}
	return q + ` ORDER BY time DESC, id DESC LIMIT ` + arg(int64(filter.Limit)), args
}

package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// dbNow is the database's clock in unix microseconds: lease times never
// depend on the servers' clocks agreeing.
const dbNow = `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT`

// Term is what a lease call found: who holds the lease, in which term,
// until when (the database's clock).
type Term struct {
	Held    bool // by the caller
	Holder  string
	Token   int64
	Expires time.Time
	// Renewed is when the holder last renewed it.
	Renewed time.Time
}

// Acquire takes the lease name for holder for ttl, or renews it when
// holder holds it still. A lease taken (not renewed) starts a new term:
// its token is one more than the last. When another holder's lease has
// not expired, Acquire reports that holder and changes nothing.
func (db *DB) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (Term, error) {
	var t Term
	var exp, ren int64
	err := db.db.QueryRowContext(ctx, `INSERT INTO leader_lease (name, holder, token, expires, renewed)
		VALUES ($1, $2, 1, `+dbNow+` + $3, `+dbNow+`)
		ON CONFLICT (name) DO UPDATE SET
			token = CASE WHEN leader_lease.holder = excluded.holder AND leader_lease.expires > `+dbNow+`
				THEN leader_lease.token ELSE leader_lease.token + 1 END,
			holder = excluded.holder, expires = excluded.expires, renewed = excluded.renewed
		WHERE leader_lease.holder = excluded.holder OR leader_lease.expires <= `+dbNow+`
		RETURNING holder, token, expires, renewed`, name, holder, ttl.Microseconds()).Scan(&t.Holder, &t.Token, &exp, &ren)
	if errors.Is(err, sql.ErrNoRows) {
		// Another server holds it.
		err = db.db.QueryRowContext(ctx, `SELECT holder, token, expires, renewed FROM leader_lease WHERE name = $1`, name).Scan(&t.Holder, &t.Token, &exp, &ren)
	}
	if err != nil {
		return Term{}, fmt.Errorf("postgres: lease %s: %w", name, err)
	}
	t.Held = t.Holder == holder
	t.Expires, t.Renewed = time.UnixMicro(exp).UTC(), time.UnixMicro(ren).UTC()
	return t, nil
}

// Resign ends holder's term of lease name now, so that another server
// takes it at once (a server shutting down).
func (db *DB) Resign(ctx context.Context, name, holder string) error {
	_, err := db.db.ExecContext(ctx, `UPDATE leader_lease SET expires = `+dbNow+` WHERE name = $1 AND holder = $2`, name, holder)
	if err != nil {
		return fmt.Errorf("postgres: resign lease %s: %w", name, err)
	}
	return nil
}

// Lease returns the lease name as it stands; ENOTFOUND before anyone
// took it.
func (db *DB) Lease(ctx context.Context, name string) (Term, error) {
	var t Term
	var exp, ren int64
	err := db.db.QueryRowContext(ctx, `SELECT holder, token, expires, renewed FROM leader_lease WHERE name = $1`, name).Scan(&t.Holder, &t.Token, &exp, &ren)
	if errors.Is(err, sql.ErrNoRows) {
		return Term{}, core.Errorf(core.ENOTFOUND, "nobody has held lease %s yet", name)
	} else if err != nil {
		return Term{}, fmt.Errorf("postgres: lease %s: %w", name, err)
	}
	t.Expires, t.Renewed = time.UnixMicro(exp).UTC(), time.UnixMicro(ren).UTC()
	return t, nil
}

// checkFence fails the transaction when ctx carries a fence that is no
// longer the lease's current, unexpired term: a leader that lost its
// lease cannot write what it decided in its old term.
func checkFence(ctx context.Context, tx *sql.Tx) error {
	f, ok := core.FenceFrom(ctx)
	if !ok {
		return nil
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM leader_lease WHERE name = $1 AND holder = $2 AND token = $3 AND expires > `+dbNow,
		f.Name, f.Holder, f.Token).Scan(&n)
	if err != nil {
		return fmt.Errorf("postgres: check the leader's fence: %w", err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "this server's term %d as holder of %s is over: its decision is not applied", f.Token, f.Name)
	}
	return nil
}

// Replica is a server sharing the store, as it last reported itself.
type Replica struct {
	Holder string    `json:"replica"`
	Seen   time.Time `json:"seen"`
	// URL is where it takes agents' calls.
	URL string `json:"url,omitempty"`
	// Age is how long ago that was, by the database's clock.
	Age time.Duration `json:"-"`
}

// ReportReplica records that holder is serving now, taking agents'
// calls at url.
func (db *DB) ReportReplica(ctx context.Context, holder, url string) error {
	_, err := db.db.ExecContext(ctx, `INSERT INTO replicas (holder, seen, url) VALUES ($1, `+dbNow+`, $2)
		ON CONFLICT (holder) DO UPDATE SET seen = excluded.seen, url = excluded.url`, holder, url)
	if err != nil {
		return fmt.Errorf("postgres: report replica: %w", err)
	}
	return nil
}

// Replicas lists the servers seen within the last window, most recent
// first, forgetting those not seen for a day.
func (db *DB) Replicas(ctx context.Context, window time.Duration) ([]Replica, error) {
	if _, err := db.db.ExecContext(ctx, `DELETE FROM replicas WHERE seen < `+dbNow+` - $1`, (24 * time.Hour).Microseconds()); err != nil {
		return nil, fmt.Errorf("postgres: replicas: %w", err)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT holder, seen, `+dbNow+` - seen, url FROM replicas WHERE seen >= `+dbNow+` - $1 ORDER BY seen DESC, holder`, window.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: replicas: %w", err)
	}
	defer rows.Close()
	var out []Replica
	for rows.Next() {
		var r Replica
		var seen, age int64
		if err := rows.Scan(&r.Holder, &seen, &age, &r.URL); err != nil {
			return nil, err
		}
		r.Seen, r.Age = time.UnixMicro(seen).UTC(), time.Duration(age)*time.Microsecond
		out = append(out, r)
	}
	return out, rows.Err()
}

package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/shoal-ml/shoal/control/leader"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// controllersLease names the lease of the server that runs the controllers.
const controllersLease = "controllers"

// pgLease adapts the PostgreSQL store's lease to the elector; url is
// where this server takes agents' calls, reported with each round.
type pgLease struct {
	db  *postgres.DB
	url string
}

func (l pgLease) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (leader.Term, error) {
	// Each campaign round also says this server is up, for admin status.
	if err := l.db.ReportReplica(ctx, holder, l.url); err != nil {
		return leader.Term{}, err
	}
	t, err := l.db.Acquire(ctx, name, holder, ttl)
	return leader.Term{Held: t.Held, Holder: t.Holder, Token: t.Token, Expires: t.Expires}, err
}

func (l pgLease) Resign(ctx context.Context, name, holder string) error {
	return l.db.Resign(ctx, name, holder)
}

// holderID names this server among the replicas: host, URL and process.
func (m *Main) holderID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s %s pid %d", host, m.URL(), os.Getpid())
}

// runAsReplica campaigns for the controllers' lease and runs them while
// this server holds it, every write under the term's fence. On taking
// over it first gives every node a full lease (the old leader may have
// stopped renewing them) and adopts the running ones.
func (m *Main) runAsReplica(ctx context.Context, e *leader.Elector) {
	e.Run(ctx, func(ctx context.Context) {
		if err := m.ctrl.ResetLeases(ctx); err != nil {
			m.log.Error("taking over the nodes' leases failed", slog.Any("err", err))
			return
		}
		if n, err := m.ctrl.AdoptNodes(ctx); err != nil {
			m.log.Warn("adopting running nodes failed", slog.Any("err", err))
		} else if n > 0 {
			m.log.Info("adopted nodes whose agents kept running", slog.Int("nodes", n))
		}
		// Changes made on the other servers (a job submitted there, an
		// agent's report) wake the controllers at once, as local ones do.
		if pg, ok := m.store.(*postgres.DB); ok {
			go pg.ListenChanges(ctx, m.poke)
		}
		m.runControllers(ctx)
		// Another server's passes write the wait reasons now: this
		// one's memory of them would go stale.
		m.svc.WaitReasons().Forget()
	})
}

// readiness is /readyz: the store answers, and this server's role.
func (m *Main) readiness(where string, e *leader.Elector) func(ctx context.Context) (map[string]any, error) {
	return func(ctx context.Context) (map[string]any, error) {
		body := map[string]any{"store": where, "replica": m.holderID(), "role": "single"} // SQLite: the only server
		if e != nil {
			// The role first: a leader cut off from the database says
			// it stepped down even though the store does not answer.
			st := e.Status()
			body["role"], body["leader"], body["term"] = "follower", st.Holder, st.Token
			if st.Leading {
				body["role"] = "leader"
				body["leading_since"] = st.Since
			}
			if !st.LastRenewal.IsZero() {
				body["lease_seen"] = st.LastRenewal
			}
			if st.Error != "" {
				body["lease_error"] = st.Error
			}
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := m.store.View(ctx, func(tx store.Tx) error {
			_, err := tx.ListWorkspaces()
			return err
		}); err != nil {
			return body, fmt.Errorf("the store does not answer: %w", err)
		}
		if pg, ok := m.store.(*postgres.DB); ok && e != nil {
			holder, _ := body["leader"].(string)
			if t, err := pg.Lease(ctx, controllersLease); err == nil {
				body["lease_renewed_ago"] = time.Since(t.Renewed).Round(time.Millisecond).String()
				body["lease_expires"] = t.Expires
			}
			// The servers that reported within a few of their rounds.
			if reps, err := pg.Replicas(ctx, 4*e.TTL()); err == nil {
				list := make([]map[string]any, len(reps))
				for i, r := range reps {
					list[i] = map[string]any{"replica": r.Holder, "seen_ago": r.Age.Round(time.Millisecond).String(), "leader": r.Holder == holder}
				}
				body["replicas"] = list
			}
		}
		return body, nil
	}
}

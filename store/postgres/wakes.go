package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/store/live"
)

// wakePayloadMax bounds a notification's payload, under PostgreSQL's
// 8000 bytes: a longer batch of node IDs goes in several.
const wakePayloadMax = 7000

// Wakes is live.Wakes shared by the servers on one database: a wake wakes
// this server's waiters at once and is forwarded to the others with
// NOTIFY on a channel of this store's own (named after its database and
// schema), whose LISTEN wakes theirs. So an agent long-polling one replica
// hears of work the leader placed, or of a cancel made through another
// replica, at once. A wake lost on the way (a dropped connection) only
// delays the news until the agent's poll times out; after a lost
// connection every waiter here is woken, since which were meant is
// unknown.
type Wakes struct {
	db     *DB
	hub    *live.Hub
	origin string // this process, whose own notifications it skips

	mu      sync.Mutex
	pending map[string]bool // node IDs to forward
	kick    chan struct{}
}

var _ live.Wakes = (*Wakes)(nil)

// NewWakes returns the database's forwarding Wakes; Run forwards.
func (db *DB) NewWakes() *Wakes {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return &Wakes{db: db, hub: live.NewHub(), origin: hex.EncodeToString(b), pending: map[string]bool{}, kick: make(chan struct{}, 1)}
}

// Wait returns a channel closed at the next wake of node, from any
// server.
func (w *Wakes) Wait(node string) <-chan struct{} { return w.hub.Wait(node) }

// Notify calls fn once at the next wake of node, from any server, unless
// stop is called first.
func (w *Wakes) Notify(node string, fn func()) (stop func() bool) { return w.hub.Notify(node, fn) }

// Wake wakes the nodes' waiters here and queues the wake for the other
// servers; it does not wait for the database.
func (w *Wakes) Wake(nodes ...string) {
	if len(nodes) == 0 {
		return
	}
	w.hub.Wake(nodes...)
	w.mu.Lock()
	for _, n := range nodes {
		w.pending[n] = true
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run forwards wakes to the other servers and from them until ctx ends,
// reconnecting with backoff when the database is lost. It holds one
// connection of the pool for LISTEN and borrows one to send.
func (w *Wakes) Run(ctx context.Context) {
	channel, err := w.channel(ctx)
	for err != nil {
		w.db.log.Warn("naming the wake channel failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		channel, err = w.channel(ctx)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.send(ctx, channel)
	}()
	w.listen(ctx, channel)
	<-done
}

// channel names this store's channel: servers on other databases, or on
// other schemas of this one, are other stores.
func (w *Wakes) channel(ctx context.Context) (string, error) {
	var db, schema string
	if err := w.db.pool.QueryRow(ctx, `SELECT current_database(), current_schema()`).Scan(&db, &schema); err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write([]byte(db + "\x00" + schema))
	return fmt.Sprintf("shoal_wake_%016x", h.Sum64()), nil
}

// send forwards the queued wakes, batched, until ctx ends.
func (w *Wakes) send(ctx context.Context, channel string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		w.mu.Lock()
		nodes := w.pending
		w.pending = map[string]bool{}
		w.mu.Unlock()
		for _, p := range wakePayloads(w.origin, nodes) {
			if _, err := w.db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, p); err != nil && ctx.Err() == nil {
				// Dropped: the agents hear of it on their next poll.
				w.db.log.Warn("forwarding node wakes failed", "err", err)
			}
		}
	}
}

// wakePayloads are the notifications carrying nodes: origin, then one
// node ID a line, each under wakePayloadMax.
func wakePayloads(origin string, nodes map[string]bool) []string {
	var out []string
	var b strings.Builder
	for n := range nodes {
		if b.Len() > 0 && b.Len()+1+len(n) > wakePayloadMax {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(origin)
		}
		b.WriteString("\n" + n)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// listen wakes the waiters the other servers' notifications name, until
// ctx ends; after a lost connection it wakes every waiter.
func (w *Wakes) listen(ctx context.Context, channel string) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := w.listenOnce(ctx, channel)
		if ctx.Err() != nil {
			return
		}
		w.db.log.Warn("listening for node wakes failed; retrying", "err", err, "in", wait)
		w.hub.WakeAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (w *Wakes) listenOnce(ctx context.Context, channel string) error {
	conn, err := w.db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection will be LISTENing: it leaves the pool for good.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		origin, ids, _ := strings.Cut(n.Payload, "\n")
		if origin == w.origin || ids == "" {
			continue // this server's own wake, already done
		}
		w.hub.Wake(strings.Split(ids, "\n")...)
	}
}

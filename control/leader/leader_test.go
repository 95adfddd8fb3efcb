package leader

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// memLease is a lease in memory with a switch to make it unreachable: the
// elector's rules are tested here; the PostgreSQL lease itself in
// package postgres.
type memLease struct {
	mu      sync.Mutex
	holder  string
	token   int64
	expires time.Time
	down    bool
}

func (l *memLease) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (Term, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return Term{}, errors.New("database unreachable")
	}
	now := time.Now()
	if l.holder != holder && now.Before(l.expires) {
		return Term{Holder: l.holder, Token: l.token, Expires: l.expires}, nil
	}
	if l.holder != holder || !now.Before(l.expires) {
		l.token++
	}
	l.holder, l.expires = holder, now.Add(ttl)
	return Term{Held: true, Holder: holder, Token: l.token, Expires: l.expires}, nil
}

func (l *memLease) Resign(ctx context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == holder {
		l.expires = time.Now()
	}
	return nil
}

func (l *memLease) setDown(d bool) { l.mu.Lock(); l.down = d; l.mu.Unlock() }

// One of two servers leads, under a fence of its term; when it cannot
// reach the lease it steps down before the lease ends, and the other
// takes over in a newer term; a server that shuts down resigns at once.
func TestElection(t *testing.T) {
	lease := &memLease{}
	const ttl = 300 * time.Millisecond
	type leading struct {
		who   string
		fence core.Fence
	}
	events := make(chan leading, 10)
	ended := make(chan string, 10)
	start := func(who string) (context.CancelFunc, chan struct{}) {
		ctx, cancel := context.WithCancel(context.Background())
		e := New(Config{Lease: lease, Name: "controllers", Holder: who, TTL: ttl})
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.Run(ctx, func(ctx context.Context) {
				f, _ := core.FenceFrom(ctx)
				events <- leading{who, f}
				<-ctx.Done()
				ended <- who
			})
		}()
		return cancel, done
	}
	stopA, doneA := start("a")
	first := <-events
	if first.who != "a" || first.fence.Token != 1 || first.fence.Holder != "a" {
		t.Fatalf("first leader %+v", first)
	}
	stopB, doneB := start("b")
	defer func() { stopB(); <-doneB }()
	select {
	case l := <-events:
		t.Fatalf("%s leads while a holds the lease", l.who)
	case <-time.After(2 * ttl):
	}
	// a cannot reach the lease: it steps down before its lease ends.
	lease.setDown(true)
	cut := time.Now()
	if who := <-ended; who != "a" {
		t.Fatalf("%s stepped down", who)
	}
	if d := time.Since(cut); d >= ttl {
		t.Errorf("a stepped down %v after the cut; want before the lease's %v end", d, ttl)
	}
	lease.setDown(false)
	// b takes over once a's lease has expired, in a newer term (a may
	// win the race: either way, one leader and a new token).
	next := <-events
	if next.fence.Token <= first.fence.Token {
		t.Fatalf("next leader %+v; want a newer term", next)
	}
	if next.who == "a" {
		return
	}
	stopA()
	<-doneA
	// b resigns on shutdown: a takes over at once.
	stopB()
	<-doneB
}

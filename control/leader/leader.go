// Package leader elects the one server of several that runs the
// controllers (scheduler, autoscaler, node leases, schedules, idle
// shutdown). Servers campaign for a lease the store keeps (PostgreSQL: a
// row with a fencing token, timed by the database's clock); the holder
// renews it every third of its TTL and runs the controllers under a
// shoal.Fence, which the store checks in every write they make. A holder
// that cannot renew for half the TTL steps down on its own, before the
// lease can pass to another server; one that was paused past its lease
// finds its token outdated and its writes refused.
package leader

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Term is a lease as the store reports it.
type Term struct {
	Held    bool // by this server
	Holder  string
	Token   int64
	Expires time.Time
}

// Lease is the store's lease: Acquire takes or renews it for holder,
// Resign gives it up at once.
type Lease interface {
	Acquire(ctx context.Context, name, holder string, ttl time.Duration) (Term, error)
	Resign(ctx context.Context, name, holder string) error
}

// Config configures an Elector.
type Config struct {
	Lease  Lease
	Name   string // the lease's name ("controllers")
	Holder string // this server's identity, unique among the servers
	// TTL is the lease's length; default DefaultTTL. A lost leader's work
	// moves to another server within about TTL + TTL/3.
	TTL    time.Duration
	Clock  core.Clock
	Logger *slog.Logger
}

// DefaultTTL is Config.TTL's default.
const DefaultTTL = 6 * time.Second

// Status is what an Elector knows now.
type Status struct {
	Leading bool      `json:"leading"`
	Holder  string    `json:"holder"` // the current leader, as last seen
	Token   int64     `json:"token"`
	Since   time.Time `json:"since,omitempty"` // when this server took the lease
	// LastRenewal is when this server last renewed (or saw) the lease.
	LastRenewal time.Time `json:"last_renewal,omitempty"`
	Error       string    `json:"error,omitempty"` // the last failure to reach the lease
}

// Elector campaigns for a lease.
type Elector struct {
	cfg Config
	mu  sync.Mutex
	st  Status
}

// New returns an elector; Run campaigns.
func New(cfg Config) *Elector {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{cfg: cfg}
}

// TTL is the lease's length.
func (e *Elector) TTL() time.Duration { return e.cfg.TTL }

// Status returns what the elector knows now.
func (e *Elector) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st
}

func (e *Elector) set(f func(*Status)) {
	e.mu.Lock()
	f(&e.st)
	e.mu.Unlock()
}

// Run campaigns until ctx ends. While this server holds the lease, lead
// runs with a context carrying the term's fence; that context ends when
// the term does (lease lost, not renewed for half the TTL, or ctx done —
// then the lease is resigned so another server takes over at once), and
// Run waits for lead to return before campaigning again.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) {
	every := e.cfg.TTL / 3
	var (
		stop     context.CancelFunc
		done     chan struct{}
		token    int64
		renewed  time.Time
		stepDown = func(why string) {
			if stop == nil {
				return
			}
			e.cfg.Logger.Warn("stepping down as leader", "lease", e.cfg.Name, "term", token, "why", why)
			stop()
			<-done
			stop, done = nil, nil
			e.set(func(s *Status) { s.Leading, s.Since = false, time.Time{} })
		}
	)
	defer func() {
		if stop != nil {
			stepDown("shutting down")
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), every)
			if err := e.cfg.Lease.Resign(rctx, e.cfg.Name, e.cfg.Holder); err != nil {
				e.cfg.Logger.Warn("resigning the lease failed; it expires on its own", "err", err)
			}
			cancel()
		}
	}()
	for {
		actx, cancel := context.WithTimeout(ctx, every)
		term, err := e.cfg.Lease.Acquire(actx, e.cfg.Name, e.cfg.Holder, e.cfg.TTL)
		cancel()
		now := e.cfg.Clock.Now()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			e.set(func(s *Status) { s.Error = err.Error() })
			if stop != nil && now.Sub(renewed) >= e.cfg.TTL/2 {
				stepDown("the lease could not be renewed for half its TTL: " + err.Error())
			}
		case term.Held:
			if stop != nil && term.Token != token {
				stepDown("the lease was lost and taken again in a new term")
			}
			renewed = now
			if stop == nil {
				token = term.Token
				lctx, cancel := context.WithCancel(core.WithFence(ctx, core.Fence{Name: e.cfg.Name, Holder: e.cfg.Holder, Token: token}))
				stop, done = cancel, make(chan struct{})
				e.cfg.Logger.Info("leading", "lease", e.cfg.Name, "term", token)
				e.set(func(s *Status) { s.Leading, s.Since = true, now })
				go func(done chan struct{}) {
					defer close(done)
					lead(lctx)
				}(done)
			}
			e.set(func(s *Status) { s.Holder, s.Token, s.LastRenewal, s.Error = term.Holder, term.Token, now, "" })
		default:
			if stop != nil {
				stepDown("the lease is held by " + term.Holder)
			}
			e.set(func(s *Status) { s.Holder, s.Token, s.LastRenewal, s.Error = term.Holder, term.Token, now, "" })
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

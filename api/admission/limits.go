package admission

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Limits bound what one connection or caller can hold of the server, so
// that a client cannot keep connections open forever (a slowloris sending
// its headers a byte at a time, a body that never ends, an idle keep-alive)
// or pile up streams.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, once the
	// caller is authenticated (AnonymousTimeout before). Uploads
	// (artifacts, outputs) replace it with a rolling deadline
	// (TransferStallTimeout); log follows, the studio's live pages and
	// instance applications (WebSockets) lift it.
	ReadTimeout time.Duration
	// IdleTimeout bounds a keep-alive connection between requests.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
	// MaxStreamsPerPrincipal bounds one principal's concurrent log follows
	// and live studio pages; more are refused with 429.
	MaxStreamsPerPrincipal int
	// MaxAppStreamsPerPrincipal bounds one principal's concurrent requests
	// to instance applications (a notebook holds a WebSocket per kernel
	// and terminal); more are refused with 429.
	MaxAppStreamsPerPrincipal int
	// MaxAnonymous bounds concurrent requests that are not authenticated
	// (public routes, the sign-in pages, signed-out studio pages, requests
	// whose credential is missing or invalid; see admission.go of this package); more are
	// refused with 429 until some end.
	MaxAnonymous int
	// MaxAnonymousPerSource bounds the share of MaxAnonymous that one
	// source address (an IPv4 address, an IPv6 /64) may hold at once, so
	// that one client cannot take every slot.
	MaxAnonymousPerSource int
	// AnonymousTimeout bounds reading a request, body included, until its
	// caller is authenticated (from the request's start); a request that
	// never authenticates has no longer. It applies when shorter than
	// ReadTimeout.
	AnonymousTimeout time.Duration
	// MaxTransfersPerPrincipal bounds one principal's concurrent uploads
	// (artifacts, outputs) and downloads (outputs, artifacts, logs); more
	// are refused with 429.
	MaxTransfersPerPrincipal int
	// TransferStallTimeout is how long an upload or download may go
	// without moving a byte: each byte read or written extends the
	// deadline by that much, so a slow transfer that moves goes on and a
	// stalled one is cut.
	TransferStallTimeout time.Duration
}

// DefaultLimits are the server's limits.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout:         10 * time.Second,
		ReadTimeout:               60 * time.Second,
		IdleTimeout:               120 * time.Second,
		MaxHeaderBytes:            64 << 10,
		MaxStreamsPerPrincipal:    16,
		MaxAppStreamsPerPrincipal: 64,
		MaxAnonymous:              256,
		MaxAnonymousPerSource:     16,
		AnonymousTimeout:          10 * time.Second,
		MaxTransfersPerPrincipal:  8,
		TransferStallTimeout:      30 * time.Second,
	}
}

// NewHTTPServer returns an http.Server for h with l's timeouts and header
// bound. It sets no WriteTimeout: downloads of outputs and artifacts, and
// streams, take as long as they take; a download's reader that stalls is
// cut by its rolling write deadline (TransferStallTimeout).
func NewHTTPServer(h http.Handler, l Limits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes}
}

// SetLimits replaces the per-principal and anonymous caps (DefaultLimits
// until then); the timeouts are the http.Server's (NewHTTPServer).
func (s *Controller) SetLimits(l Limits) {
	s.caps.Store(&caps{
		Limits:     l,
		streams:    newPrincipalLimiter(l.MaxStreamsPerPrincipal),
		appStreams: newPrincipalLimiter(l.MaxAppStreamsPerPrincipal),
		transfers:  newPrincipalLimiter(l.MaxTransfersPerPrincipal),
		anonymous:  newSourceLimiter(l.MaxAnonymous, l.MaxAnonymousPerSource),
	})
}

// caps are the limiters of one Limits, replaced whole by SetLimits.
type caps struct {
	Limits
	streams, appStreams, transfers *principalLimiter
	anonymous                      *sourceLimiter
}

func (s *Controller) limits() *caps { return s.caps.Load() }

// principalLimiter counts each principal's concurrent long requests.
type principalLimiter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newPrincipalLimiter(n int) *principalLimiter {
	return &principalLimiter{max: max(n, 1), n: map[string]int{}}
}

// acquire takes a slot for id, or reports false when id holds max.
func (l *principalLimiter) acquire(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[id] >= l.max {
		return false
	}
	l.n[id]++
	return true
}

func (l *principalLimiter) release(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[id]--; l.n[id] <= 0 {
		delete(l.n, id)
	}
}

// longLived lifts the connection's read deadline for a request that
// legitimately lasts (an upload, a stream), once the caller is known.
func longLived(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// Stream runs h as one of p's streams (log follows, live studio pages):
// it lifts the read deadline, or answers 429 when p already holds
// MaxStreamsPerPrincipal. what names the kind of stream in the refusal.
func (s *Controller) Stream(w http.ResponseWriter, p *identity.Principal, what string, h func()) {
	stream(w, p, s.limits().streams, what, h)
}

// AppStream runs h as one of p's requests to instance applications, under
// MaxAppStreamsPerPrincipal, as Stream does.
func (s *Controller) AppStream(w http.ResponseWriter, p *identity.Principal, what string, h func()) {
	stream(w, p, s.limits().appStreams, what, h)
}

// stream runs h as one of p's streams under lim: it lifts the read
// deadline, or answers 429 when p already holds lim's cap.
func stream(w http.ResponseWriter, p *identity.Principal, lim *principalLimiter, what string, h func()) {
	id := "anonymous"
	if p != nil {
		id = p.ID
	}
	if !lim.acquire(id) {
		writeTooMany(w, what+": at most "+strconv.Itoa(lim.max)+" at a time per caller; close one (another terminal's `shoal job stream`, a browser tab) and retry")
		return
	}
	defer lim.release(id)
	longLived(w)
	h()
}

// refuseTooMany answers 429 to r; a body that came with it is not read
// (the connection is closed after the answer), since a refused request
// must not hold its connection while the body trickles in.
func refuseTooMany(w http.ResponseWriter, r *http.Request, msg string) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	writeTooMany(w, msg)
}

// writeTooMany answers 429 with Azure's error envelope.
func writeTooMany(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "5")
	httpx.WriteJSON(w, http.StatusTooManyRequests, httpx.ErrorBody{Error: httpx.ErrorDetail{Code: "TooManyRequests", Message: msg}})
}

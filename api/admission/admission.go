// Package admission bounds what one connection or caller can hold of the
// server: the read deadlines of a request before and after its caller is
// known, the anonymous slots (in all and per source address), each
// principal's streams, application streams and transfers, and the rolling
// deadlines of uploads and downloads. api.Server wraps its routes with a
// Controller; the sub-packages that authenticate on their own (mlflow)
// or stream (appproxy) are handed its methods.
package admission

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Admission. Anyone can send requests without a credential, or with a
// made-up one, so a request is anonymous until its credential has
// authenticated: it then holds one of MaxAnonymous slots, of which one
// source address holds at most MaxAnonymousPerSource, and it has
// AnonymousTimeout from its start to send its body. A request to a public
// route (sign-in, the token endpoint, the OpenID documents) stays
// anonymous whatever it carries. Authentication moves a request to its
// caller's own limits: ReadTimeout, and the per-principal caps. Health
// checks (/healthz, /readyz) take no slot: they read no body and answer
// at once, so that an orchestrator's probes go on being answered while
// the anonymous slots are full.

// startKey holds the time a request began (admit).
type startKey struct{}

// Controller applies one Limits (SetLimits) to the requests it wraps.
type Controller struct {
	// caps are the limiters of Limits (SetLimits).
	caps atomic.Pointer[caps]
}

// New returns a controller of l.
func New(l Limits) *Controller {
	c := &Controller{}
	c.SetLimits(l)
	return c
}

// Admit gives every request the unauthenticated read deadline; the
// routes' wrappers lengthen it once the caller is known (authenticated).
func (s *Controller) Admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rc := http.NewResponseController(w)
		if d := s.limits().anonymousTimeout(); d > 0 {
			_ = rc.SetReadDeadline(start.Add(d))
		}
		// A download's rolling write deadline (transfer) outlives its
		// response; the server sets none of its own (no WriteTimeout).
		_ = rc.SetWriteDeadline(time.Time{})
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), startKey{}, start)))
	})
}

// anonymousTimeout is how long a request may take to arrive, body
// included, before its caller is known: the shorter of AnonymousTimeout
// and ReadTimeout.
func (c *caps) anonymousTimeout() time.Duration {
	d := c.ReadTimeout
	if c.AnonymousTimeout > 0 && (d <= 0 || c.AnonymousTimeout < d) {
		d = c.AnonymousTimeout
	}
	return d
}

// Authenticated gives a request whose caller has authenticated the
// read deadline of ReadTimeout from its start.
func (s *Controller) Authenticated(w http.ResponseWriter, r *http.Request) {
	var deadline time.Time // none
	if d := s.limits().ReadTimeout; d > 0 {
		start, ok := r.Context().Value(startKey{}).(time.Time)
		if !ok {
			start = time.Now()
		}
		deadline = start.Add(d)
	}
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
}

// AsAnonymous runs h in one of the anonymous slots of r's source, or
// answers 429 when the source's share or all slots are taken.
func (s *Controller) AsAnonymous(w http.ResponseWriter, r *http.Request, h func()) {
	lim := s.limits().anonymous
	src := sourceOf(r.RemoteAddr)
	switch lim.acquire(src) {
	case sourceFull:
		refuseTooMany(w, r, "too many requests without a valid credential from one address: at most "+strconv.Itoa(lim.perSource)+" at a time from one address; retry shortly, or send Authorization: Bearer <token>")
		return
	case allFull:
		refuseTooMany(w, r, "too many requests without a valid credential at once (at most "+strconv.Itoa(lim.max)+"); retry shortly, or send Authorization: Bearer <token>")
		return
	}
	defer lim.release(src)
	h()
}

// AnonymousOnly serves a route that needs no credential (a public route,
// the join, a sign-in form) as anonymous, whatever the request carries.
func (s *Controller) AnonymousOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.AsAnonymous(w, r, func() { next.ServeHTTP(w, r) })
	})
}

// sourceOf is the source a request's share is counted under: its IPv4
// address, or its IPv6 /64 (what one host or site is given).
func sourceOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// sourceLimiter counts concurrent requests in all and per source.
type sourceLimiter struct {
	max, perSource int
	mu             sync.Mutex
	total          int
	n              map[string]int
}

func newSourceLimiter(total, perSource int) *sourceLimiter {
	total = max(total, 1)
	return &sourceLimiter{max: total, perSource: min(max(perSource, 1), total), n: map[string]int{}}
}

// Outcomes of sourceLimiter.acquire.
const (
	admitted = iota
	sourceFull
	allFull
)

// acquire takes a slot for src, or says which bound it is at.
func (l *sourceLimiter) acquire(src string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.n[src] >= l.perSource:
		return sourceFull
	case l.total >= l.max:
		return allFull
	}
	l.n[src]++
	l.total++
	return admitted
}

func (l *sourceLimiter) release(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.n[src]--; l.n[src] <= 0 {
		delete(l.n, src)
	}
}

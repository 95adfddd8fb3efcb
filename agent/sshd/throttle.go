package sshd

import (
	"net"
	"sync"
	"time"
)

// Password guessing is throttled per source address: after
// PasswordFailuresAllowed wrong passwords within PasswordFailureWindow,
// that address may not try a password for PasswordLockout (a right one
// is refused unchecked too, so guessing cannot go on). A cluster's
// admin_password is the only thing between the network and a shell on
// every node; keys are not throttled, as they cannot be guessed.
const (
	PasswordFailuresAllowed = 5
	PasswordFailureWindow   = 10 * time.Minute
	PasswordLockout         = 15 * time.Minute
)

// throttleSweepAt is how many sources are remembered before stale ones
// are forgotten, so that many addresses cannot grow the table unbounded.
const throttleSweepAt = 4096

// passwordThrottle counts password failures by source address.
type passwordThrottle struct {
	now func() time.Time

	mu      sync.Mutex
	sources map[string]*sourceFailures
}

// sourceFailures is one address's recent failures, and the end of its
// lockout if it is locked out.
type sourceFailures struct {
	fails []time.Time
	until time.Time
}

func newPasswordThrottle(now func() time.Time) *passwordThrottle {
	return &passwordThrottle{now: now, sources: map[string]*sourceFailures{}}
}

// sourceOf is the address a connection's failures count against: its
// IP, whatever the port.
func sourceOf(addr net.Addr) string {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	// One IPv6 client commonly holds a whole /64 and can rotate through
	// it: the /64 is the source.
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return host
}

// lockedUntil returns when the source's lockout ends, or the zero time
// when it may try a password now.
func (p *passwordThrottle) lockedUntil(source string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.sources[source]; st != nil && p.now().Before(st.until) {
		return st.until
	}
	return time.Time{}
}

// failed records a wrong password from source; it reports whether that
// failure locked the source out.
func (p *passwordThrottle) failed(source string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if len(p.sources) >= throttleSweepAt {
		for k, st := range p.sources {
			if !now.Before(st.until) && (len(st.fails) == 0 || now.Sub(st.fails[len(st.fails)-1]) >= PasswordFailureWindow) {
				delete(p.sources, k)
			}
		}
	}
	st := p.sources[source]
	if st == nil {
		st = &sourceFailures{}
		p.sources[source] = st
	}
	kept := st.fails[:0]
	for _, f := range st.fails {
		if now.Sub(f) < PasswordFailureWindow {
			kept = append(kept, f)
		}
	}
	st.fails = append(kept, now)
	if len(st.fails) >= PasswordFailuresAllowed {
		st.fails, st.until = nil, now.Add(PasswordLockout)
		return true
	}
	return false
}

// succeeded forgets the source's failures: it knew the password.
func (p *passwordThrottle) succeeded(source string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.sources, source)
}

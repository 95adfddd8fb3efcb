package api

import (
	"net"
	"sync"
	"time"
)

// anonymousAuditPerSecond bounds how many refused requests without any
// credential one source address gets recorded per second: anyone can send
// them, and each record is a database write, so without a bound a scanner
// could fill the disk. Past the bound they are still refused, not recorded.
const anonymousAuditPerSecond = 20

// auditLimiter counts recorded refusals per source address and second.
type auditLimiter struct {
	mu     sync.Mutex
	second int64
	counts map[string]int
}

// allow reports whether a refusal from addr may be recorded now.
func (l *auditLimiter) allow(addr string, now time.Time) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := now.Unix(); s != l.second || l.counts == nil {
		l.second, l.counts = s, map[string]int{}
	}
	l.counts[host]++
	return l.counts[host] <= anonymousAuditPerSecond
}

package app

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/store/postgres"
)

// serverList is where agents reach every server sharing a PostgreSQL
// store, as the servers report themselves (replicas), this server's
// first. Agents get it with every join and sync and move to another
// server when theirs stops answering. Read from the database at most
// every refresh: it is asked for on every heartbeat.
type serverList struct {
	db      *postgres.DB
	self    string
	window  time.Duration
	refresh time.Duration

	mu   sync.Mutex
	at   time.Time
	urls []string
}

// get returns the list, reading it again when it is older than refresh.
// On a failed read it keeps the last one (the database may be away a
// moment; the agents keep what they were told).
func (l *serverList) get(ctx context.Context) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The servers' own wall clock only paces the cache, decides nothing.
	if now := time.Now(); l.urls == nil || now.Sub(l.at) >= l.refresh {
		reps, err := l.db.Replicas(ctx, l.window)
		if err == nil || l.urls == nil {
			urls := []string{l.self}
			seen := map[string]bool{l.self: true}
			for _, r := range reps {
				if r.URL != "" && !seen[r.URL] {
					seen[r.URL] = true
					urls = append(urls, r.URL)
				}
			}
			l.urls, l.at = urls, now
		}
	}
	return append([]string(nil), l.urls...)
}

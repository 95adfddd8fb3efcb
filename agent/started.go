package agent

import (
	"sync"

	"github.com/shoal-ml/shoal/domain/node"
)

// startedCap bounds the ranks an agent remembers having started: far more
// than a node starts between a result's delivery and the last answer that
// could still name it (a long-poll of a few seconds, at most a lease).
const startedCap = 4096

// startedRanks remembers the ranks this agent has started, so that an
// answer built before their result was stored (a long-poll answered late,
// another server's view a moment behind the leader's) never starts one a
// second time. An attempt's rank runs once: a retry is a new attempt.
// The chaos suite on PostgreSQL found a rank started again about a second
// after its result was accepted, once the outbox no longer held it.
type startedRanks struct {
	mu    sync.Mutex
	seen  map[node.RankRef]struct{}
	order []node.RankRef // a ring: the oldest is forgotten first
	next  int
}

// claim reports whether ref is new, and remembers it.
func (s *startedRanks) claim(ref node.RankRef) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[node.RankRef]struct{}, 64)
	}
	if _, ok := s.seen[ref]; ok {
		return false
	}
	if len(s.order) < startedCap {
		s.order = append(s.order, ref)
	} else {
		delete(s.seen, s.order[s.next])
		s.order[s.next] = ref
		s.next = (s.next + 1) % startedCap
	}
	s.seen[ref] = struct{}{}
	return true
}

package agent

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/node"
)

// An answer that names a rank this agent already ran (its result
// delivered, so neither running nor in the outbox) starts nothing.
func TestStartedRankIsNotStartedAgain(t *testing.T) {
	var s startedRanks
	ref := node.RankRef{AttemptID: "att-1", Rank: 0}
	if !s.claim(ref) {
		t.Fatal("a rank never started was refused")
	}
	if s.claim(ref) {
		t.Fatal("a rank already started was claimed again: a stale answer would run it twice")
	}
	if !s.claim(node.RankRef{AttemptID: "att-1", Rank: 1}) || !s.claim(node.RankRef{AttemptID: "att-2", Rank: 0}) {
		t.Fatal("another rank, or the next attempt of the job, was refused")
	}
}

// The memory is bounded: past startedCap the oldest are forgotten, the
// newest kept.
func TestStartedRanksBounded(t *testing.T) {
	var s startedRanks
	for i := 0; i < startedCap+10; i++ {
		if !s.claim(node.RankRef{AttemptID: "a", Rank: i}) {
			t.Fatalf("rank %d refused", i)
		}
	}
	if len(s.seen) != startedCap || len(s.order) != startedCap {
		t.Fatalf("holds %d (%d in order), want %d", len(s.seen), len(s.order), startedCap)
	}
	if s.claim(node.RankRef{AttemptID: "a", Rank: startedCap + 9}) {
		t.Fatal("the newest rank was forgotten")
	}
	if !s.claim(node.RankRef{AttemptID: "a", Rank: 0}) {
		t.Fatal("the oldest rank is still held past the cap")
	}
}

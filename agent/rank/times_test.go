package rank

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// markerClock tells t0 until a file exists and t0 + an hour from then on:
// a rank's times by it say whether they were taken before or after its
// command (which makes the file) ran. A reading while the file is missing
// waits up to wait for it, so that a time taken once the command had
// started reads after it, however late the command gets its turn.
type markerClock struct {
	marker string
	t0     time.Time
	wait   time.Duration
}

func (c markerClock) Now() time.Time {
	deadline := time.Now().Add(c.wait)
	for {
		if _, err := os.Stat(c.marker); err == nil {
			return c.t0.Add(time.Hour)
		}
		if time.Now().After(deadline) {
			return c.t0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A rank's reported start is its node's time before its processes started
// and its end the time after they ended, by the one clock: its start to
// end is never shorter than they ran. (Stamped once the processes had
// started, the start was late by the fork, the exec and the agent's turn,
// and a `sleep 0.3` was reported as running 297.6 ms.)
func TestRankTimesSpanItsProcesses(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := newEventServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "times", Clock: markerClock{marker: marker, t0: t0, wait: 2 * time.Second}})
	tk := artifactsTask("att-times", "touch "+marker)
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	rep := a.result(tk.RankRef).Report
	if rep.StartTime == nil || rep.EndTime == nil {
		t.Fatalf("the rank reported no start or end: %+v", rep)
	}
	if !rep.StartTime.Equal(t0) {
		t.Errorf("the rank's start %s was taken after its command ran, want before (%s)", rep.StartTime, t0)
	}
	if !rep.EndTime.Equal(t0.Add(time.Hour)) {
		t.Errorf("the rank's end %s was taken before its command ran, want after (%s)", rep.EndTime, t0.Add(time.Hour))
	}
}

package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

// syncingAgent is an agent of node "n", without containers, whose server
// is at url, ready to run its sync loop once a.join is set.
func syncingAgent(t *testing.T, url string) *Agent {
	t.Helper()
	a, err := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir(), ServerURL: url, JoinToken: "t",
		Containers: ctrhost.ContainersOff})
	if err != nil {
		t.Fatal(err)
	}
	a.ctr = ctrhost.Open(context.Background(), a.cfg.containerHost(), a.log)
	t.Cleanup(a.ctr.Close)
	return a
}

// The agent keeps the pace each sync's answer sets, not only the join's:
// a fleet's lease grows and shrinks with it (decide/nodelease). Joined at
// 3 s, told 7 s, it waits 7 s on its next sync; an answer without a pace
// (an older server) keeps it.
func TestSyncKeepsThePaceTheServerSays(t *testing.T) {
	var waits []string
	syncAnswers(t, []node.AgentSyncResponse{{HeartbeatInterval: 7 * time.Second}, {}, {Exit: true}}, func(_ *Agent, r *http.Request) {
		waits = append(waits, r.URL.Query().Get("wait"))
	})
	if len(waits) != 3 || waits[0] != "3s" || waits[1] != "7s" || waits[2] != "7s" {
		t.Fatalf("the syncs waited %q, want [3s 7s 7s]", waits)
	}
}

// syncAnswers runs the sync loop of an agent joined at a 3 s pace against
// a server that gives answers in turn (the last again and again), calling
// seen with the agent and each sync's request before it is answered, one
// at a time; it returns once the loop has ended.
func syncAnswers(t *testing.T, answers []node.AgentSyncResponse, seen func(a *Agent, r *http.Request)) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	var a *Agent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent/v1/sync" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		i := n
		n++
		seen(a, r)
		mu.Unlock()
		json.NewEncoder(w).Encode(answers[min(i, len(answers)-1)])
	}))
	defer srv.Close()
	a = syncingAgent(t, srv.URL)
	a.join = &node.JoinResponse{NodeID: "n", HeartbeatInterval: 3 * time.Second, LeaseTTL: 9 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.syncLoop(ctx); err != nil {
		t.Fatal(err)
	}
}

// A server that takes a sync and does not answer (one cut off from its
// database) does not hold the node's heartbeat past its lease: past the
// sync's bound the agent calls again, on a new connection, and the call
// that answers comes within the lease (3 s + 3 s here).
func TestSyncDoesNotWaitOnAServerThatDoesNotAnswer(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent/v1/sync" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		i := len(at)
		at = append(at, time.Now())
		mu.Unlock()
		if i == 0 {
			select { // the first call: taken, never answered
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		json.NewEncoder(w).Encode(node.AgentSyncResponse{Exit: true})
	}))
	defer srv.Close()
	defer close(release)
	a := syncingAgent(t, srv.URL)
	a.join = &node.JoinResponse{NodeID: "n", HeartbeatInterval: time.Second, LeaseTTL: 3 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.syncLoop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("%d syncs, want 2 (the unanswered one, then one answered)", len(at))
	}
	if gap := at[1].Sub(at[0]); gap >= 6*time.Second {
		t.Errorf("the next sync came %v after the unanswered one; want within the lease (6 s)", gap)
	} else {
		t.Logf("the next sync came %v after the unanswered one (bound %v)", gap.Round(time.Millisecond), syncBound(time.Second, time.Second))
	}
}

// The agent carries a log's end in a final report only while the server
// last heard from says its reports take one: a sync's answer from an
// older server (no reports_take_log) withdraws it, as failing over to
// one during an upgrade does.
func TestSyncFollowsTheServersWordOnLogsInReports(t *testing.T) {
	var held []bool
	syncAnswers(t, []node.AgentSyncResponse{{ReportsTakeLog: true}, {}, {Exit: true}}, func(a *Agent, _ *http.Request) {
		held = append(held, a.reportsTakeLog.Load())
	})
	if want := []bool{false, true, false}; len(held) != 3 || held[0] != want[0] || held[1] != want[1] || held[2] != want[2] {
		t.Fatalf("the agent carried logs in reports %v at its syncs, want %v", held, want)
	}
}

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

// The agent keeps the pace each sync's answer sets, not only the join's:
// a fleet's lease grows and shrinks with it (decide/nodelease). Joined at
// 3 s, told 7 s, it waits 7 s on its next sync; an answer without a pace
// (an older server) keeps it.
func TestSyncKeepsThePaceTheServerSays(t *testing.T) {
	var mu sync.Mutex
	var waits []string
	answers := []node.AgentSyncResponse{{HeartbeatInterval: 7 * time.Second}, {}, {Exit: true}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent/v1/sync" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		i := len(waits)
		waits = append(waits, r.URL.Query().Get("wait"))
		mu.Unlock()
		json.NewEncoder(w).Encode(answers[min(i, len(answers)-1)])
	}))
	defer srv.Close()
	a, err := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir(), ServerURL: srv.URL, JoinToken: "t",
		Containers: ctrhost.ContainersOff})
	if err != nil {
		t.Fatal(err)
	}
	a.ctr = ctrhost.Open(context.Background(), a.cfg.containerHost(), a.log)
	defer a.ctr.Close()
	a.join = &node.JoinResponse{NodeID: "n", HeartbeatInterval: 3 * time.Second, LeaseTTL: 9 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.syncLoop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 3 || waits[0] != "3s" || waits[1] != "7s" || waits[2] != "7s" {
		t.Fatalf("the syncs waited %q, want [3s 7s 7s]", waits)
	}
}

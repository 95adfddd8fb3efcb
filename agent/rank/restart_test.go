package rank

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

// An agent restarted after it started a rank has no memory of it, and
// the server may still hand the rank out (its Running report never came,
// so it looks unstarted). The rank's folder, left by the earlier agent
// process, says it started: it is not run a second time but ends Lost,
// so that the job runs again as a new attempt, once. The chaos suite on
// PostgreSQL caught an attempt's rank run twice on one node 3.3 s apart,
// an agent killed between the two (2026-12-02).
func TestRankStartedByAnEarlierAgentIsNotRunAgain(t *testing.T) {
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "restarted", Accounts: runas.Unisolated()})
	marker := filepath.Join(t.TempDir(), "ran")
	tk := artifactsTask("att-twice", "echo again >> "+marker)
	tk.Outputs = nil
	r := a.newRank(tk)
	// What the earlier agent process left: the folder, its log so far.
	if err := os.MkdirAll(r.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.logPath(), []byte("epoch 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Run(t.Context())
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the rank's command ran a second time")
	}
	rep := srv.final(t)
	if rep.State != node.RankLost || rep.Failure != node.RankPrepareFailed || !strings.Contains(rep.Reason, "not run a second time") {
		t.Fatalf("final report %+v, want Lost (prepare_failed) saying it is not run again", rep)
	}
	// The rank's log ends with what the earlier agent wrote, and says why
	// it went no further.
	if b, err := os.ReadFile(a.result(tk.RankRef).LogPath); err != nil || !strings.HasPrefix(string(b), "epoch 1\n") || !strings.Contains(string(b), "not run a second time") {
		t.Errorf("the rank's log %q (%v), want the earlier agent's line and why it ends", b, err)
	}
	// A folder an agent before 2026-12-03 left keeps its log in a folder
	// of its own: that log is the one the rank ends with.
	legacy := artifactsTask("att-twice-legacy", "echo again >> "+marker)
	legacy.Outputs = nil
	lr := a.newRank(legacy)
	if err := os.MkdirAll(filepath.Join(lr.Dir(), "user_logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lr.Dir(), "user_logs", "std_log.txt"), []byte("epoch 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lr.Run(t.Context())
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the earlier agent's rank ran a second time")
	}
	if b, err := os.ReadFile(a.result(legacy.RankRef).LogPath); err != nil || !strings.HasPrefix(string(b), "epoch 7\n") {
		t.Errorf("the earlier agent's rank ended with the log %q (%v), want the one it wrote", b, err)
	}
	// A rank whose folder is not there runs, as ever.
	fresh := artifactsTask("att-once", "echo once >> "+marker)
	fresh.Outputs = nil
	a.newRank(fresh).Run(t.Context())
	if b, err := os.ReadFile(marker); err != nil || string(b) != "once\n" {
		t.Fatalf("a fresh rank's command left %q (%v), want it run once", b, err)
	}
}

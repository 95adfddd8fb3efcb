package rank

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// A rank's log and its services' files are the agent's. The job's account
// writes its log through the open file the agent hands its processes; it
// can neither read that file back (the agent writes its own lines there
// too), nor list the rank's folder or put anything in it. The job tries
// each from its working folder and writes what it managed into ./outputs,
// which comes back. A service's files (a Jupyter's output, with its token,
// which only the submitter in person reaches through the proxy) sit
// beside the log, made by the agent as the log is: root's, 0600.
func TestJobCannotReachTheAgentsFilesInItsRankFolder(t *testing.T) {
	testenv.Root(t, "runs the job as an account of its own, as an agent as root does")
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "logprivacy", Accounts: accounts})
	tk := artifactsTask("att-logprivacy", `echo secret-line; `+
		`for f in ../std_log.txt ../user_logs/std_log.txt; do `+
		`cat "$f" >/dev/null 2>&1 && echo "read $f" >> outputs/reached; done; `+
		`ls .. >/dev/null 2>&1 && echo "listed .." >> outputs/reached; `+
		`ls ../user_logs >/dev/null 2>&1 && echo "listed ../user_logs" >> outputs/reached; `+
		`touch ../planted 2>/dev/null && echo "wrote .." >> outputs/reached; `+
		`echo done > outputs/ran`)
	tk.Outputs = nil
	r := a.newRank(tk)
	r.Run(t.Context())
	if rep := srv.final(t); rep.State != node.RankCompleted {
		t.Fatalf("final report %+v, want Completed", rep)
	}
	if srv.kept("artifacts/outputs/ran") != "done\n" {
		t.Fatal("the job's probe did not run to its end")
	}
	if got := srv.kept("artifacts/outputs/reached"); got != "" {
		t.Errorf("the job reached the agent's files in its rank folder:\n%s", got)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir(), "planted")); err == nil {
		t.Error("the job put a file in its rank folder")
	}
	// The log is there, and holds the job's line: the job wrote it through
	// the file the agent opened, not by name.
	b, err := os.ReadFile(r.logPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "secret-line\n") {
		t.Errorf("the rank's log %q lacks the job's line", b)
	}
	fi, err := os.Stat(r.logPath())
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the rank's log is uid %d mode %v, want root's 0600", st.Uid, fi.Mode().Perm())
	}
}

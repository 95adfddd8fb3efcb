package rank

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// A rank's log and the agent's other files of the rank are the agent's.
// The job's account writes its log through the open file the agent hands
// its processes; it can neither read that file back (the agent writes its
// own lines there too), nor list the rank's folder or put anything in it.
// The job tries each from its working folder and writes what it managed
// into ./outputs, which comes back. A service's files (a Jupyter's output,
// an ssh service's host key) sit beside the log, made by the agent as the
// log is: root's, 0600. Another account on the node cannot enter the
// rank's folder at all, not even to stat a file whose name it guesses.
func TestJobCannotReachTheAgentsFilesInItsRankFolder(t *testing.T) {
	testenv.Root(t, "runs the job as an account of its own, as an agent as root does")
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "logprivacy", Accounts: accounts})
	tk := artifactsTask("att-logprivacy", `echo secret-line; `+
		`cat ../std_log.txt >/dev/null 2>&1 && echo "read ../std_log.txt" >> outputs/reached; `+
		`ls .. >/dev/null 2>&1 && echo "listed .." >> outputs/reached; `+
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
	acct, err := accounts.For("workspace:ws")
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if st := di.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != acct.GID || di.Mode().Perm() != 0o710 {
		t.Errorf("the rank's folder is %d:%d mode %v, want root's, the job account's group (%d), 0710", st.Uid, st.Gid, di.Mode().Perm(), acct.GID)
	}
	// Another account, one that knows the attempt's folder by name.
	other, err := accounts.For("workspace:other-ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"stat", r.logPath()}, {"ls", r.Dir()}, {"ls", filepath.Join(r.Dir(), "outputs")}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = other.Apply(nil)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("another account ran %v in the rank's folder: %s", argv, out)
		}
	}
}

package rank

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// outputsServer is the agent API as far as a rank's end goes: it keeps
// the outputs archive a rank uploads (unpacked into a folder of the
// test's), the rank's reports, and serves code archives.
type outputsServer struct {
	*httptest.Server
	dir  string
	mu   sync.Mutex
	reps []node.RankReport
	code map[string][]byte
	// restore is what an earlier attempt left, served to a rank that
	// restores outputs.
	restore []byte
	// notify, when set, gets each report as it arrives.
	notify func(node.RankReport)
	// inputs are the kept outputs of other jobs the agent API serves, by
	// path after /agent/v1/attempts/ (<attempt>/ranks/<rank>/inputs/<name>).
	inputs map[string][]byte
}

func newOutputsServer(t *testing.T) *outputsServer {
	s := &outputsServer{dir: t.TempDir(), code: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/outputs"):
			if err := archive.Unpack(r.Body, s.dir, archive.Limits{}); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case strings.Contains(r.URL.Path, "/inputs/"):
			s.mu.Lock()
			b, ok := s.inputs[strings.TrimPrefix(r.URL.Path, "/agent/v1/attempts/")]
			s.mu.Unlock()
			if !ok {
				http.Error(w, "no such kept output", http.StatusNotFound)
				return
			}
			w.Write(b)
		case strings.HasSuffix(r.URL.Path, "/restore") && s.restore != nil:
			w.Write(s.restore)
		case strings.HasSuffix(r.URL.Path, "/status"):
			var rep node.RankReport
			_ = json.NewDecoder(r.Body).Decode(&rep)
			s.mu.Lock()
			s.reps = append(s.reps, rep)
			notify := s.notify
			s.mu.Unlock()
			if notify != nil {
				notify(rep)
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		case strings.HasPrefix(r.URL.Path, "/agent/v1/artifacts/"):
			s.mu.Lock()
			b, ok := s.code[strings.TrimPrefix(r.URL.Path, "/agent/v1/artifacts/")]
			s.mu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		default:
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// final is the rank's last report.
func (s *outputsServer) final(t *testing.T) node.RankReport {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.reps) - 1; i >= 0; i-- {
		switch s.reps[i].State {
		case node.RankPreparing, node.RankRunning, node.RankFinalizing:
			continue
		}
		return s.reps[i]
	}
	t.Fatalf("no final report among %+v", s.reps)
	return node.RankReport{}
}

// kept reads a file of the uploaded outputs ("" when absent).
func (s *outputsServer) kept(rel string) string {
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(b)
}

func artifactsTask(id, command string) *node.AgentTask {
	return &node.AgentTask{RankRef: node.RankRef{AttemptID: id}, JobName: "job-" + id, Workspace: "ws", Attempt: 1,
		NodeCount: 1, ProcessesPerNode: 1, KillGrace: time.Second, Outputs: []string{"out"}, Command: command}
}

// accountsCases are the ways a node runs work: as accounts of their own
// (an agent running as root) and as the agent's own user.
func accountsCases(t *testing.T) map[string]*runas.Accounts {
	cases := map[string]*runas.Accounts{"unisolated": runas.Unisolated()}
	if os.Geteuid() == 0 {
		acc, err := runas.New()
		if err != nil {
			t.Fatal(err)
		}
		cases["isolated"] = acc
	}
	return cases
}

// Azure ML keeps what a job writes to ./outputs and ./logs as its
// artifacts: both folders are there, writable by the job's account, and
// what they hold at the end comes back in the rank's outputs as the
// artifacts output, beside the declared ones, whatever the exit code.
func TestRankKeepsOutputsAndLogsAsArtifacts(t *testing.T) {
	for name, accounts := range accountsCases(t) {
		t.Run(name, func(t *testing.T) {
			srv := newOutputsServer(t)
			a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-" + name, Accounts: accounts})
			tk := artifactsTask("att-art-"+name, `echo hello > ./outputs/helloworld.txt && mkdir -p logs/sub && echo y > logs/sub/y.txt && `+
				`echo o > "$AZUREML_OUTPUT_out/o.txt" && id -u > outputs/uid && exit 4`)
			runRank(t, a, tk, nil)
			rep := srv.final(t)
			if rep.State != node.RankFailed || !rep.Artifacts {
				t.Fatalf("final report %+v, want Failed with artifacts kept", rep)
			}
			for rel, want := range map[string]string{
				"artifacts/outputs/helloworld.txt": "hello\n", "artifacts/logs/sub/y.txt": "y\n", "out/o.txt": "o\n",
			} {
				if got := srv.kept(rel); got != want {
					t.Errorf("kept %s = %q, want %q", rel, got, want)
				}
			}
			acct, err := accounts.For("workspace:ws")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(srv.kept("artifacts/outputs/uid")); got != strconv.FormatUint(uint64(acct.UID), 10) {
				t.Errorf("./outputs written by uid %q, want the job's account %d", got, acct.UID)
			}
		})
	}
}

// A rank of a multi-node job keeps its ./logs under logs/rank-N, so that
// the ranks' logs downloaded together do not overwrite each other.
func TestRankOfManyKeepsItsLogsApart(t *testing.T) {
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-multi", Accounts: runas.Unisolated()})
	tk := artifactsTask("att-art-multi", `echo two > logs/train.log && echo m > outputs/m.txt`)
	tk.Rank, tk.NodeCount = 2, 3
	runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || !rep.Artifacts {
		t.Fatalf("final report %+v", rep)
	}
	if got := srv.kept("artifacts/logs/rank-2/train.log"); got != "two\n" {
		t.Errorf("rank 2's log kept as %q", got)
	}
	if got := srv.kept("artifacts/outputs/m.txt"); got != "m\n" {
		t.Errorf("rank 2's ./outputs kept as %q", got)
	}
}

// A job that leaves ./outputs and ./logs empty keeps nothing: no upload
// for an output it did not declare, and no artifacts listed.
func TestRankWithEmptyArtifactsKeepsNone(t *testing.T) {
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-none", Accounts: runas.Unisolated()})
	tk := artifactsTask("att-art-none", `test -d outputs && test -d logs && test -w outputs`)
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || rep.Artifacts {
		t.Fatalf("final report %+v, want Completed without artifacts", rep)
	}
	if entries, _ := os.ReadDir(srv.dir); len(entries) != 0 {
		t.Errorf("outputs uploaded for a job that wrote none: %v", entries)
	}
}

// A job that declares an output named artifacts keeps it as its own:
// its ./outputs does not overwrite it.
func TestRankDeclaringArtifactsKeepsItsOwn(t *testing.T) {
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-own", Accounts: runas.Unisolated()})
	tk := artifactsTask("att-art-own", `echo mine > "$AZUREML_OUTPUT_artifacts/mine.txt" && echo x > outputs/x.txt`)
	tk.Outputs = []string{"artifacts"}
	runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || rep.Artifacts {
		t.Fatalf("final report %+v, want Completed, its declared output its own", rep)
	}
	if got := srv.kept("artifacts/mine.txt"); got != "mine\n" || srv.kept("artifacts/outputs/x.txt") != "" {
		t.Errorf("the declared artifacts output: mine.txt %q, outputs/x.txt %q", got, srv.kept("artifacts/outputs/x.txt"))
	}
}

// Attack: a job that swaps ./outputs for a link to a folder only root
// may read does not have the agent (root) upload that folder: the link
// is not followed. One that makes its outputs' artifacts folder a link
// elsewhere does not have the agent write there.
func TestRankArtifactsFollowNoLink(t *testing.T) {
	for name, accounts := range accountsCases(t) {
		t.Run(name, func(t *testing.T) {
			secret := t.TempDir()
			os.Chmod(secret, 0o700)
			if err := os.WriteFile(filepath.Join(secret, "secret.txt"), []byte("root only"), 0o600); err != nil {
				t.Fatal(err)
			}
			elsewhere := t.TempDir()
			os.Chmod(elsewhere, 0o777)
			srv := newOutputsServer(t)
			a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-link-" + name, Accounts: accounts})
			tk := artifactsTask("att-art-link-"+name, `rm -rf outputs && ln -s `+secret+` outputs && `+
				`ln -s `+elsewhere+` "$SHOAL_OUTPUTS_DIR/artifacts" && echo l > logs/l.txt`)
			runRank(t, a, tk, nil)
			rep := srv.final(t)
			if rep.State != node.RankCompleted || !rep.Artifacts {
				t.Fatalf("final report %+v", rep)
			}
			filepath.WalkDir(srv.dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("root only")) {
						t.Errorf("the root-only file was uploaded as %s", p)
					}
				}
				return nil
			})
			if got := srv.kept("artifacts/logs/l.txt"); got != "l\n" {
				t.Errorf("./logs kept as %q", got)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("the agent wrote through the job's link: %v", entries)
			}
		})
	}
}

// Attack: code that brings ./outputs as a link is refused before the
// job runs, as the job's failure (not the node's): at the end the agent
// would move what is there.
func TestRankCodeWithOutputsLinkFails(t *testing.T) {
	srv := newOutputsServer(t)
	srv.code["sha256:code"] = tarGz(t, &tar.Header{Name: "sub/", Typeflag: tar.TypeDir, Mode: 0o755}, &tar.Header{Name: "outputs", Typeflag: tar.TypeSymlink, Linkname: "sub", Mode: 0o777}).Bytes()
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-code", Accounts: runas.Unisolated()})
	tk := artifactsTask("att-art-code", `echo ran`)
	tk.Code = "sha256:code"
	log := runRank(t, a, tk, nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || !strings.Contains(rep.Reason, "./outputs is a link") || strings.Contains(log, "\nran") {
		t.Fatalf("final report %+v, log:\n%s", rep, log)
	}
}

// A job that checkpoints to ./outputs resumes from it: the next attempt
// (after a preemption) finds what the earlier one kept there, and what
// it adds is kept with it.
func TestRankRestoresItsArtifacts(t *testing.T) {
	for name, accounts := range accountsCases(t) {
		t.Run(name, func(t *testing.T) {
			srv := newOutputsServer(t)
			srv.restore = packedDir(t, map[string]string{"artifacts/outputs/ckpt.txt": "step1\n", "artifacts/logs/old.log": "old\n", "out/o.txt": "o\n"})
			a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "art-restore-" + name, Accounts: accounts})
			tk := artifactsTask("att-art-restore-"+name, `test "$(cat outputs/ckpt.txt)" = step1 && test -e logs/old.log && echo step2 >> outputs/ckpt.txt`)
			tk.RestoreOutputs, tk.Attempt = true, 2
			log := runRank(t, a, tk, nil)
			if rep := srv.final(t); rep.State != node.RankCompleted || !rep.Artifacts {
				t.Fatalf("final report %+v; log:\n%s", rep, log)
			}
			if got := srv.kept("artifacts/outputs/ckpt.txt"); got != "step1\nstep2\n" {
				t.Errorf("the checkpoint kept as %q", got)
			}
			if got := srv.kept("out/o.txt"); got != "o\n" {
				t.Errorf("the declared output restored and kept as %q", got)
			}
		})
	}
}

// packedDir is an archive of files (relative path → content).
func packedDir(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := archive.Pack(&b, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A task without code or declared outputs has its folders handed to its
// account entry by entry rather than walked (own): its working
// directory, ./outputs, ./logs and its outputs folder are all the job's
// to write, and what it writes there is kept.
func TestRankWithoutCodeOrOutputsOwnsItsFolders(t *testing.T) {
	for name, accounts := range accountsCases(t) {
		t.Run(name, func(t *testing.T) {
			srv := newOutputsServer(t)
			a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "own-" + name, Accounts: accounts})
			tk := artifactsTask("att-own-"+name, `echo w > ./here && echo o > outputs/o.txt && echo l > logs/l.txt && `+
				`echo d > "$SHOAL_OUTPUTS_DIR/d.txt" && test "$(stat -c %u .)" = "$(id -u)" && test "$(stat -c %u "$SHOAL_OUTPUTS_DIR")" = "$(id -u)"`)
			tk.Outputs = nil
			runRank(t, a, tk, nil)
			if rep := srv.final(t); rep.State != node.RankCompleted || !rep.Artifacts {
				t.Fatalf("final report %+v, want Completed with artifacts kept", rep)
			}
			for rel, want := range map[string]string{"artifacts/outputs/o.txt": "o\n", "artifacts/logs/l.txt": "l\n", "d.txt": "d\n"} {
				if got := srv.kept(rel); got != want {
					t.Errorf("kept %s = %q, want %q", rel, got, want)
				}
			}
		})
	}
}

// A rank whose outputs folder is empty at its end hands over a result
// that names none, so that its delivery does not read the folder again;
// one that wrote there, even undeclared, names it and its outputs are
// uploaded.
func TestRankResultNamesOnlyOutputsWithSomething(t *testing.T) {
	srv := newOutputsServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "out-empty", Accounts: runas.Unisolated()})
	tk := artifactsTask("att-out-empty", "true")
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	if got := a.result(tk.RankRef); !a.ended(tk.RankRef) || got.OutputsDir != "" {
		t.Fatalf("an empty outputs folder is named in the result: %q", got.OutputsDir)
	}
	tk = artifactsTask("att-out-some", `echo s > "$SHOAL_OUTPUTS_DIR/s.txt"`)
	tk.Outputs = nil
	r := runRankOf(t, a, tk)
	if got := a.result(tk.RankRef); got.OutputsDir != filepath.Join(r.Dir(), "outputs") || srv.kept("s.txt") != "s\n" {
		t.Fatalf("outputs of an undeclared file: result names %q, kept %q", got.OutputsDir, srv.kept("s.txt"))
	}
}

// runRankOf runs task on a and returns its rank.
func runRankOf(t *testing.T, a *testAgent, task *node.AgentTask) *Rank {
	t.Helper()
	r := a.newRank(task)
	r.Run(t.Context())
	return r
}

// holdsEntries tells a folder holding something from an empty one, and
// counts a link (even to a full folder), a file or nothing as holding
// nothing.
func TestHoldsEntries(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"empty", "full", "full-long"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "full", "f"), nil, 0o600)
	for i := range 40 {
		// More entries than one read of the folder returns.
		os.WriteFile(filepath.Join(dir, "full-long", strings.Repeat("n", 200)+strconv.Itoa(i)), nil, 0o600)
	}
	os.Symlink(filepath.Join(dir, "full"), filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o600)
	fd, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	for name, want := range map[string]bool{"empty": false, "full": true, "full-long": true, "link": false, "file": false, "none": false} {
		if got := holdsEntries(int(fd.Fd()), name); got != want {
			t.Errorf("holdsEntries(%s) = %v, want %v", name, got, want)
		}
	}
}

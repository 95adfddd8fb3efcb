package rank

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	par "github.com/shoal-ml/shoal/domain/parallel"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// probeDriver is a parallel rank's command that says what the job's
// account may do with the driver and its task: read and run it, never
// change or replace it.
const probeDriver = `test -r "$SHOAL_PARALLEL_DRIVER" && echo DRIVER-READABLE; ` +
	`(echo 'print(1)' > "$SHOAL_PARALLEL_DRIVER") 2>/dev/null && echo DRIVER-WRITTEN; ` +
	`(mv "$SHOAL_PARALLEL_DRIVER" "$SHOAL_PARALLEL_DRIVER.x") 2>/dev/null && echo DRIVER-MOVED; ` +
	`(touch "$(dirname "$SHOAL_PARALLEL_DRIVER")/other.py") 2>/dev/null && echo DRIVER-DIR-WRITTEN; ` +
	`grep -q "Shoal's parallel job driver" "$SHOAL_PARALLEL_DRIVER" && echo DRIVER-INTACT; ` +
	`python3 -c 'import json, os; t = json.loads(os.environ["SHOAL_PARALLEL_TASK"]); print("INPUT", sorted(os.listdir(t["input_path"])))'`

func parallelProbeTask(id, image string) *node.AgentTask {
	tk := task(id, image)
	if image == "" {
		tk.Environment, tk.Container = nil, nil
	}
	tk.Command = probeDriver
	tk.Inputs = map[string]*job.JobInput{"data": {Type: "uri_folder", Path: "art-data"}}
	tk.Parallel = &node.ParallelTask{Spec: job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: "s.py"},
		Path: "/api/v1/parallel/" + id, Token: "shoalpar_probe", InputType: "uri_folder"}
	return tk
}

// The job's account, in a container of its image and as host processes,
// reads and runs the driver but can neither change nor replace it (the
// program that holds the ledger's token is Shoal's), and its task names
// the input as the rank has it.
func TestParallelRankCannotChangeItsDriver(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	srv.mu.Lock()
	srv.artifacts["art-data"] = tarGz(t, &tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644}).Bytes()
	srv.mu.Unlock()
	a := containerAgent(t, env, srv, "ctr-par")
	for name, tk := range map[string]*node.AgentTask{
		"container": parallelProbeTask("att-par-ctr", env.Registry.Addr+"/"+testctr.PushedBase),
		"host":      parallelProbeTask("att-par-host", ""),
	} {
		t.Run(name, func(t *testing.T) {
			log := runRank(t, a, tk, nil)
			if rep := srv.final(t); rep.State != node.RankCompleted {
				t.Fatalf("final report %+v; log:\n%s", rep, log)
			}
			for _, want := range []string{"DRIVER-READABLE", "DRIVER-INTACT", "INPUT ['a.txt']"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %s:\n%s", want, log)
				}
			}
			for _, bad := range []string{"DRIVER-WRITTEN", "DRIVER-MOVED", "DRIVER-DIR-WRITTEN"} {
				if strings.Contains(log, bad) {
					t.Errorf("the job's account could change the driver (%s):\n%s", bad, log)
				}
			}
			if strings.Contains(log, "shoalpar_probe") {
				t.Errorf("the token is in the rank's log:\n%s", log)
			}
		})
	}
}

// A parallel job's rank runs Shoal's driver from the job's command, in a
// container of its image and as host processes: it reaches the job's
// ledger at the agent's server URL (from the container's own network
// too), runs the entry script from the code folder, and rank 0 writes
// the rows to the append_row_to output. The ledger is a double
// (paralleltest): the real one is the server's, tested end to end.
func TestParallelRankRunsTheDriver(t *testing.T) {
	env := testctr.Shared(t)
	fa := newFakeAgentServer(t)
	fa.mu.Lock()
	fa.artifacts["art-data"] = tarGz(t, &tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644},
		&tar.Header{Name: "b.txt", Typeflag: tar.TypeReg, Mode: 0o644}).Bytes()
	fa.mu.Unlock()
	for name, image := range map[string]string{"container": env.Registry.Addr + "/" + testctr.PushedBase, "host": ""} {
		t.Run(name, func(t *testing.T) {
			l, _ := paralleltest.New(t)
			mux := http.NewServeMux()
			mux.Handle(par.PathPrefix, l)
			mux.Handle("/", fa.Config.Handler)
			both := httptest.NewServer(mux)
			t.Cleanup(both.Close)
			a := containerAgent(t, env, &fakeAgentServer{Server: both}, "ctr-par-run-"+name)
			id := "att-par-run-" + name
			tk := parallelProbeTask(id, image)
			tk.Parallel.Path, tk.Parallel.Token = paralleltest.Path, l.Token
			tk.Parallel.Spec.AppendRowTo, tk.Parallel.Spec.EntryScript = "${{outputs.out}}", "score.py"
			tk.Parallel.Spec.MiniBatchSize = "1"
			tk.Code = "art-code"
			fa.mu.Lock()
			fa.artifacts["art-code"] = scoreCode(t)
			fa.mu.Unlock()
			tk.Command = job.ParallelCommand("--tag " + name)
			log := runRank(t, a, tk, nil)
			if rep := fa.final(t); rep.State != node.RankCompleted {
				t.Fatalf("final report %+v; log:\n%s", rep, log)
			}
			rows, err := os.ReadFile(filepath.Join(AttemptDir(a.RunDir, tk), "outputs", "out", "parallel_run_step.txt"))
			if want := name + " a.txt\n" + name + " b.txt\n"; err != nil || string(rows) != want {
				t.Errorf("rows %q (%v), want %q; log:\n%s", rows, err, want, log)
			}
			if strings.Contains(log, l.Token) {
				t.Errorf("the token is in the rank's log:\n%s", log)
			}
		})
	}
}

// scoreCode is a code folder whose score.py scores each file as
// "<--tag> <name>".
func scoreCode(t *testing.T) []byte {
	script := "import argparse, os\n" +
		"def init():\n    global tag\n    tag = argparse.ArgumentParser().parse_known_args()[1][1]\n" +
		"def run(mb):\n    return [tag + ' ' + os.path.basename(f) for f in mb]\n"
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "score.py", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(script))})
	tw.Write([]byte(script))
	tw.Close()
	gz.Close()
	return b.Bytes()
}

package rank

import (
	"archive/tar"
	"strings"
	"testing"

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

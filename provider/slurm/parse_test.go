package slurm

import "testing"

// Slurm 22.05 writes states as strings and numbers plainly; 23.02 and
// later as lists and {"set","number"} objects. Both read the same.
func TestParseAcrossVersions(t *testing.T) {
	old := []byte(`{"meta":{},"errors":[],"jobs":[{"job_id":7,"name":"shoal-a","job_state":"RUNNING","state_reason":"None"}]}`)
	cur := []byte(`{"meta":{},"errors":[],"jobs":[{"job_id":7,"name":"shoal-a","job_state":["PREEMPTED"],"state_reason":"None"}]}`)
	for _, tc := range []struct {
		doc   []byte
		state string
		live  bool
	}{{old, "RUNNING", true}, {cur, "PREEMPTED", false}} {
		jobs, err := parseSqueue(tc.doc)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("parseSqueue: %v %v", jobs, err)
		}
		if jobs[0].ID != 7 || jobs[0].state() != tc.state || jobs[0].live() != tc.live {
			t.Fatalf("job = %+v; want 7 %s live=%v", jobs[0], tc.state, tc.live)
		}
	}
	nodes, err := parseSinfo([]byte(`{"errors":[],"nodes":[
		{"name":"a","address":"10.0.0.1","cpus":4,"real_memory":4096,"state":"idle","reason":"","gres":"gpu:a100:2(S:0-1)"},
		{"name":"b","cpus":{"set":true,"number":8},"real_memory":{"set":true,"number":8192},"state":["IDLE"],"state_flags":["DRAIN"],"reason":"bad fan","gres":"gpu:1,shard:4"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if nodes[0].CPUs != 4 || gresGPUs(nodes[0].Gres) != 2 || nodes[0].unusable() != "" {
		t.Errorf("node a = %+v", nodes[0])
	}
	if nodes[1].CPUs != 8 || nodes[1].RealMemory != 8192 || gresGPUs(nodes[1].Gres) != 1 || nodes[1].unusable() != "Slurm: idle+drain (bad fan)" {
		t.Errorf("node b = %+v, unusable %q", nodes[1], nodes[1].unusable())
	}
	if _, err := parseSqueue([]byte(`{"errors":[{"error":"Invalid job id","error_number":2017}],"jobs":[]}`)); err == nil {
		t.Error("an error in squeue's output was not reported")
	}
	if _, err := parseSqueue([]byte("JOBID PARTITION NAME")); err == nil {
		t.Error("screen text was accepted as squeue --json output")
	}
}

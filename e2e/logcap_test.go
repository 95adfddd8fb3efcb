package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJobsLogCutAtTheWorkspaceCap: with the workspace's log cap at 1 KiB
// (set by the administrator), a job that prints 200 KiB leaves a 1 KiB
// log and one marker line, on the server and in the node's work dir.
func TestJobsLogCutAtTheWorkspaceCap(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "logcap-cluster"
	mustRun(t, s.env, "workspace", "update", "--max-log-bytes", "1KiB", "-o", "none")
	if limits := mustRun(t, s.env, "workspace", "limits", "-o", "tsv"); !strings.Contains(limits, "1024\t10737418240") {
		t.Errorf("workspace limits: %q", limits)
	}
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: for i in $(seq 1 4000); do echo line $i of a very chatty job; done\n")
	name := submitJob(t, s, file, "--compute", cluster)
	waitFor(t, 60*time.Second, "the job to end", func() (bool, string) {
		j := getJob(t, s, name)
		return j.Status == "Completed" || j.Status == "Failed", j.String()
	})
	const marker = "\n[shoal: log cut at 1 KiB; the rest was discarded]\n"
	log := jobLog(t, s, name)
	if len(log) != 1024+len(marker) || !strings.HasSuffix(log, marker) || !strings.HasPrefix(log, "line 1 of") {
		t.Errorf("streamed log (%d bytes), tail %q", len(log), log[max(0, len(log)-120):])
	}
	nodeLogs, _ := filepath.Glob(filepath.Join(s.nodesDir, "*", "attempts", "*", "std_log.txt"))
	if len(nodeLogs) != 1 {
		t.Fatalf("node logs: %v", nodeLogs)
	}
	if b, err := os.ReadFile(nodeLogs[0]); err != nil || int64(len(b)) != 1024+int64(len(marker)) || !strings.HasSuffix(string(b), marker) {
		t.Errorf("the node's log (%d bytes): %v", len(b), err)
	}
}

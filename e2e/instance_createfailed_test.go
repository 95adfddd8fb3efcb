package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 35, item 18: an instance whose start the local provider refuses
// because an agent for its node is already running showed CreateFailed
// and no reason. The reason is now in the create's error, and in
// `compute show`'s errors.
func TestInstanceCreateFailedSaysWhy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	// A process that looks like an agent for the instance's node (its
	// command line names the node), recorded as the node's agent, as a
	// leftover agent would be.
	const nodeID = "ci-local-busy"
	decoy := exec.Command("sh", "-c", "sleep 600; :", "agent", "--node-id", nodeID)
	if err := decoy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = decoy.Process.Kill(); _ = decoy.Wait() })
	dir := filepath.Join(s.nodesDir, nodeID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.pid"), []byte(strconv.Itoa(decoy.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr, _ := mustFail(t, s.env, "compute", "create", "--name", "busy", "--type", "computeinstance")
	if !strings.Contains(stderr, "CreateFailed") || !strings.Contains(stderr, "an agent for node "+nodeID+" is already running") {
		t.Errorf("the create's error does not say why:\n%s", stderr)
	}
	v := runJSON[struct {
		State  string `json:"state"`
		Errors []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}](t, s.env, "compute", "show", "-n", "busy", "-o", "json")
	if v.State != "CreateFailed" || len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "is already running (pid "+strconv.Itoa(decoy.Process.Pid)+")") {
		t.Fatalf("compute show: %+v, want CreateFailed with the provider's reason", v)
	}
}

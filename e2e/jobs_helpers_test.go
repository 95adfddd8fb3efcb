package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fastJobsConfig makes node loss and process kills quick: a node is lost
// 6 s after its last heartbeat (lease 3 s + grace 3 s, where a server's
// default is 10 s + 10 s), and SIGKILL follows SIGTERM after 1 s.
//
// The lease was 1 s + 1 s. On CI's two cores, beside the compilation of
// other test binaries and podman's host reports, an agent or the server
// now and then stood still for 2 s: a healthy node was declared lost and
// its job ran a second attempt (TestNodesShareTheHostsImages in CI, 2026-12-01;
// TestContainerJobs and the instance tests had been given longer leases
// for the same cause). Agents sync every third of the lease, so 3 s also
// makes each idle agent's heartbeats a third as many; work still reaches
// an agent at once (its sync is a long poll the server answers when
// there is work).
const fastJobsConfig = "node_lease: 3s\nnode_lease_grace: 3s\nkill_grace: 1s\n"

// jobView is what `shoal job show` prints, the fields the tests read.
type jobView struct {
	Name           string     `json:"name"`
	Command        string     `json:"command"`
	Compute        string     `json:"compute"`
	Status         string     `json:"status"`
	StatusReason   string     `json:"status_reason"`
	StatusCode     string     `json:"status_reason_code"`
	Error          string     `json:"error"`
	CreatedOn      time.Time  `json:"created_on"`
	StartTime      *time.Time `json:"start_time"`
	EndTime        *time.Time `json:"end_time"`
	AttemptCount   int        `json:"attempt_count"`
	CurrentAttempt string     `json:"current_attempt_id"`
	FailedAttempts int        `json:"failed_attempts"`
	InfraRequeues  int        `json:"infra_requeues"`
	ExitCode       *int       `json:"exit_code"`
}

func (j jobView) String() string {
	return fmt.Sprintf("job %s: status %s, reason %q, error %q, attempts %d (failed %d, infra requeues %d)",
		j.Name, j.Status, j.StatusReason, j.Error, j.AttemptCount, j.FailedAttempts, j.InfraRequeues)
}

// attemptView is one entry of `shoal job list-attempts`.
type attemptView struct {
	ID         string     `json:"id"`
	Number     int        `json:"number"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason"`
	ExitCode   *int       `json:"exit_code"`
	MasterAddr string     `json:"master_addr"`
	MasterPort int        `json:"master_port"`
	EndTime    *time.Time `json:"end_time"`
	Ranks      []struct {
		Rank   int    `json:"rank"`
		NodeID string `json:"node_id"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"ranks"`
}

// nodeView is one entry of `shoal compute list-nodes`.
type nodeView struct {
	ID             string `json:"node_id"`
	State          string `json:"node_state"`
	StateReason    string `json:"state_reason"`
	CurrentJobName string `json:"current_job_name"`
	Port           int    `json:"port"`
	Draining       bool   `json:"draining"`
	Address        string `json:"private_ip_address"`
}

func nodeIDs(nodes []nodeView) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	slices.Sort(out)
	return out
}

func describeNodes(nodes []nodeView) string {
	var parts []string
	for _, n := range nodes {
		s := n.ID + " " + n.State
		if n.CurrentJobName != "" {
			s += " running " + n.CurrentJobName
		}
		if n.StateReason != "" {
			s += " (" + n.StateReason + ")"
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// jobFile returns the path of a job YAML file in testdata/jobs.
func jobFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "jobs", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirWriter returns a writer of files under dir: write(name, text)
// writes dir/name (its folders made) and returns its path, for the tests
// that lay out an asset's YAML beside the files it names.
func dirWriter(t *testing.T, dir string) func(name, text string) string {
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// writeJobFile writes a job YAML into a fresh temporary directory.
func writeJobFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.yml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// createCluster creates a cluster with flags.
func createCluster(t *testing.T, s *server, name string, flags ...string) {
	t.Helper()
	mustRun(t, s.env, append([]string{"compute", "create", "--name", name, "-o", "none"}, flags...)...)
}

// submitJob runs `shoal job create -f file ARGS` and returns the job's name.
func submitJob(t *testing.T, s *server, file string, args ...string) string {
	t.Helper()
	j := runJSON[jobView](t, s.env, append([]string{"job", "create", "-f", file, "-o", "json"}, args...)...)
	if j.Name == "" {
		t.Fatalf("job create printed no name")
	}
	return j.Name
}

func getJob(t *testing.T, s *server, name string) jobView {
	t.Helper()
	return runJSON[jobView](t, s.env, "job", "show", "-n", name, "-o", "json")
}

func listAttempts(t *testing.T, s *server, name string) []attemptView {
	t.Helper()
	return runJSON[[]attemptView](t, s.env, "job", "list-attempts", "-n", name, "-o", "json")
}

func listNodes(t *testing.T, s *server, compute string) []nodeView {
	t.Helper()
	return runJSON[[]nodeView](t, s.env, "compute", "list-nodes", "-n", compute, "-o", "json")
}

// apiNodes lists a compute's nodes over HTTP without failing the test, for
// pollers running in their own goroutine.
func apiNodes(s *server, token, compute string) ([]nodeView, error) {
	req, err := http.NewRequest(http.MethodGet, s.url+"/api/v1/workspaces/default/computes/"+url.PathEscape(compute)+"/nodes", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list nodes: HTTP %d", resp.StatusCode)
	}
	var body struct {
		Value []nodeView `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Value, nil
}

// waitFor polls cond every 100 ms until it holds; after timeout it fails
// the test with what and cond's last description of the state.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitJob waits until the job is in one of the statuses; a job that ends
// in another final status fails the test at once.
func waitJob(t *testing.T, s *server, name string, timeout time.Duration, statuses ...string) jobView {
	t.Helper()
	var j jobView
	waitFor(t, timeout, fmt.Sprintf("job %s to be %s", name, strings.Join(statuses, " or ")), func() (bool, string) {
		j = getJob(t, s, name)
		if slices.Contains(statuses, j.Status) {
			return true, ""
		}
		if j.Status == "Completed" || j.Status == "Failed" || j.Status == "Canceled" {
			t.Fatalf("job %s ended %s, want %s:\n%s\nattempts:%s", name, j.Status, strings.Join(statuses, " or "), j, describeAttempts(listAttempts(t, s, name)))
		}
		state := j.String()
		if j.AttemptCount > 1 {
			state += "\nattempts:" + describeAttempts(listAttempts(t, s, name))
		}
		return false, state
	})
	return j
}

func describeAttempts(list []attemptView) string {
	var b strings.Builder
	for _, a := range list {
		fmt.Fprintf(&b, "\n  attempt %d %s: %q", a.Number, a.Status, a.Reason)
		for _, r := range a.Ranks {
			fmt.Fprintf(&b, "\n    rank %d on %s %s: %q", r.Rank, r.NodeID, r.Status, r.Reason)
		}
	}
	return b.String()
}

// jobLog returns the log of the job's newest attempt (rank 0 unless args
// say otherwise) with `shoal job stream`, which returns once the job ended.
func jobLog(t *testing.T, s *server, name string, args ...string) string {
	t.Helper()
	return mustRun(t, s.env, append([]string{"job", "stream", "-n", name}, args...)...)
}

// downloadJob runs `shoal job download` into a fresh folder and returns
// the job's folder in it.
func downloadJob(t *testing.T, s *server, name string) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, s.env, "job", "download", "-n", name, "-p", dir)
	return filepath.Join(dir, name)
}

// readPIDFile reads a pid written by a job.
func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the job did not leave its pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("%s holds %q, not a pid", path, b)
	}
	return pid
}

// attemptOutputs returns the outputs folder of rank 0 of an attempt on the
// node's work dir (the agent writes there while the job runs).
func attemptOutputs(s *server, node, attemptID string) string {
	return filepath.Join(s.nodesDir, node, "attempts", attemptID+"-r0", "outputs")
}

// currentAttempt waits until the job has a current attempt with its rank 0
// on a node, and returns that attempt.
func currentAttempt(t *testing.T, s *server, name string) attemptView {
	t.Helper()
	var a attemptView
	waitFor(t, 20*time.Second, "job "+name+" to have an attempt on a node", func() (bool, string) {
		list := listAttempts(t, s, name)
		if len(list) == 0 {
			return false, "no attempt"
		}
		a = list[len(list)-1]
		return len(a.Ranks) > 0 && a.Ranks[0].NodeID != "", fmt.Sprintf("%+v", a)
	})
	return a
}

// assertPIDsGone requires none of the pids to be a live process of job;
// it says whether they went late (within grace) or not at all.
func assertPIDsGone(t *testing.T, job string, pids map[string]int, grace time.Duration) {
	t.Helper()
	alive := func() []string {
		var out []string
		for name, pid := range pids {
			if pidAlive(pid, job) {
				p, _ := readProc(pid)
				out = append(out, fmt.Sprintf("%s pid %d (%s)", name, pid, p.cmdline))
			}
		}
		slices.Sort(out)
		return out
	}
	first := alive()
	if len(first) == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(alive()) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if still := alive(); len(still) > 0 {
		t.Errorf("processes of job %s still alive %s after the job ended: %v", job, grace, still)
	} else {
		t.Errorf("processes of job %s were still alive when the job was reported ended (gone within %s): %v", job, grace, first)
	}
}

// hasEventText reports whether an event's kind or reason contains text.
func hasEventText(evs []map[string]any, text string) bool {
	for _, e := range evs {
		if strings.Contains(jsonStr(e["kind"]), text) || strings.Contains(jsonStr(e["reason"]), text) {
			return true
		}
	}
	return false
}

func eventLines(evs []map[string]any) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\n  %s %s %s: %s", jsonStr(e["time"]), jsonStr(e["kind"]), jsonStr(e["actor"]), jsonStr(e["reason"]))
	}
	return b.String()
}

// parseEnvFile reads KEY=VALUE lines.
func parseEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

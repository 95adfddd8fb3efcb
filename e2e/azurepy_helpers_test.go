package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pyRun is a Python script of testdata/azurepy run with Azure's own SDK
// against a server: signed in as service principal sp (what `shoal sp
// create -o json` printed), with env added.
type pyRun struct {
	script string
	// args follow the script on its command line.
	args []string
	sp   map[string]any
	env  []string
	// hosts, when set, is an /etc/hosts the script sees instead of the
	// machine's (bind-mounted in a mount namespace of its own: the name
	// azure-ai-ml builds for the Blob endpoint reaches a relay).
	hosts   string
	timeout time.Duration
}

// runAzurePy runs r against s, failing the test when the script fails,
// and returns its output and its JSON lines by their "step".
func runAzurePy(t *testing.T, s *server, r pyRun) (string, map[string]map[string]any) {
	t.Helper()
	standin, _ := filepath.Abs("../compat/azurepy/standin")
	script, _ := filepath.Abs(filepath.Join("testdata/azurepy", r.script))
	cmd := exec.Command("/usr/bin/python3", append([]string{script}, r.args...)...)
	if r.hosts != "" {
		cmd = exec.Command("unshare", append([]string{"-m", "sh", "-c", `mount --bind "$SHOAL_HOSTS" /etc/hosts && exec /usr/bin/python3 "$SHOAL_SCRIPT" "$@"`, "sh"}, r.args...)...)
		cmd.Env = append(cmd.Env, "SHOAL_HOSTS="+r.hosts, "SHOAL_SCRIPT="+script)
	}
	cmd.Dir = t.TempDir() // the SDK writes nothing of its own next to the tests
	cmd.Env = append(append(os.Environ(), cmd.Env...), "AZUREML_DEV_URL_MFE="+s.url+"/", "REQUESTS_CA_BUNDLE="+filepath.Join(s.dataDir, "tls", "ca.pem"),
		"AZURE_AUTHORITY_HOST="+jsonStr(r.sp["authority_host"]), "AZURE_TENANT_ID="+jsonStr(r.sp["tenant_id"]),
		"AZURE_CLIENT_ID="+jsonStr(r.sp["client_id"]), "AZURE_CLIENT_SECRET="+jsonStr(r.sp["client_secret"]),
		"PYTHONPATH="+standin)
	cmd.Env = append(cmd.Env, r.env...)
	timeout := r.timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
	}
	if err != nil {
		t.Fatalf("%s failed: %v\n%s\n%s", r.script, err, out, failedJobs(t, s))
	}
	steps := map[string]map[string]any{}
	for _, line := range strings.Split(string(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["step"] != nil {
			steps[jsonStr(m["step"])] = m
		}
	}
	return string(out), steps
}

// failedJobs describes each failed job of s's default workspace: its
// error, its events and the end of its output, so that a script's
// failure says why a job it waited for failed.
func failedJobs(t *testing.T, s *server) string {
	t.Helper()
	names, _, _ := run(t, s.env, "job", "list", "--query", "[?status=='Failed'].name", "-o", "tsv")
	var b strings.Builder
	for _, name := range strings.Fields(names) {
		show, _, _ := run(t, s.env, "job", "show", "--name", name, "--query", "error", "-o", "json")
		events, _, _ := run(t, s.env, "job", "events", "--name", name, "-o", "table")
		logs, _, _ := run(t, s.env, "job", "stream", "--name", name)
		fmt.Fprintf(&b, "failed job %s: %s\nevents:\n%s\noutput:\n%s\n", name, show, events, tailText(logs, 60))
	}
	return b.String()
}

// tailText is the last n lines of text.
func tailText(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

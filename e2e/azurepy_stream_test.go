package e2e_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// TestAzurePythonSDKStreamsJobs: jobs submitted with `shoal job create`
// are followed with Azure's own Python SDK (testdata/azurepy/stream.py):
// azure-ai-ml finds run history through the workspace's discoveryUrl,
// polls the run's details and downloads the rank's log URL without a
// credential, printing the job's lines, the summary, and for a failed
// job raising the error with the job's exit code, as on Azure. Where the
// server answers ARM's GET jobs/{id}, ml_client.jobs.stream(name) itself
// must print the job's lines too; until then the script says it skipped
// that part, and so does this test's log.
func TestAzurePythonSDKStreamsJobs(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-stream", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-stream", "--role", "Reader", "-o", "none")
	createCluster(t, s, "stream-cpu", "--max-instances", "3")
	// The gates: a folder every job's user can look into.
	gates, err := os.MkdirTemp("", "shoal-stream-gates-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(gates) })
	if err := os.Chmod(gates, 0o755); err != nil {
		t.Fatal(err)
	}
	gated := func(then string) string {
		return "type: command\ncompute: azureml:stream-cpu\ncommand: >-\n  while [ ! -e " + gates + "/$SHOAL_JOB_NAME ]; do sleep 0.2; done; " + then + "\n"
	}
	ok := submitJob(t, s, writeJobFile(t, gated(`echo "line one from shoal"; echo "line two from shoal"`)))
	failed := submitJob(t, s, writeJobFile(t, gated(`echo "about to fail"; exit 3`)))
	viaARM := submitJob(t, s, writeJobFile(t, gated(`echo "streamed through jobs.stream"`)))

	out, steps := runAzurePy(t, s, pyRun{script: "stream.py", args: []string{ok, failed, viaARM}, sp: sp,
		env: []string{"GATE_DIR=" + gates}, timeout: 4 * time.Minute})
	if got := jsonStr(steps["discovery"]["api"]); got != s.url {
		t.Errorf("the discovery document's api: %q, want %q\n%s", got, s.url, out)
	}
	streamed := jsonStr(steps["history:"+ok]["output"])
	for _, want := range []string{"RunId: " + ok, "Streaming user_logs/std_log.txt", "line one from shoal\nline two from shoal\n", "Execution Summary"} {
		if !strings.Contains(streamed, want) {
			t.Errorf("streaming %s printed no %q:\n%s", ok, want, out)
		}
	}
	if steps["history:"+ok]["error"] != nil {
		t.Errorf("streaming %s raised %v", ok, steps["history:"+ok]["error"])
	}
	// The lines are those `shoal job logs` shows.
	if log := jobLog(t, s, ok); !strings.Contains(streamed, log) {
		t.Errorf("shoal job stream shows %q, the SDK printed:\n%s", log, streamed)
	}
	f := steps["history:"+failed]
	if out := jsonStr(f["output"]); !strings.Contains(out, "about to fail") {
		t.Errorf("streaming %s printed no log:\n%s", failed, out)
	}
	if e := jsonStr(f["error"]); !strings.HasPrefix(e, "JobException") || !strings.Contains(e, "UserError") || !strings.Contains(e, "3") {
		t.Errorf("streaming the failed %s raised %q, want the run's error", failed, e)
	}
	a := steps["arm:"+viaARM]
	if skipped := jsonStr(a["skipped"]); skipped != "" {
		// ARM's job routes (issue 37's armjobs part) are not in this
		// server: then and only then may jobs.stream itself wait.
		r, err := http.NewRequest("GET", s.url+"/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/jobs/"+viaARM+"?api-version=2023-04-01", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+s.adminToken(t))
		caPEM, err := os.ReadFile(filepath.Join(s.dataDir, "tls", "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		resp, err := hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("stream.py skipped jobs.stream (%s) but the server answers GET jobs/%s with %d", skipped, viaARM, resp.StatusCode)
		}
		t.Logf("ml_client.jobs.stream not run: %s", skipped)
		return
	}
	if out := jsonStr(a["output"]); !strings.Contains(out, "streamed through jobs.stream") || a["error"] != nil {
		t.Errorf("ml_client.jobs.stream(%s): %v\n%s", viaARM, a["error"], out)
	}
}

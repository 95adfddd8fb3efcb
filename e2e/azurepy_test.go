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

	"github.com/shoal-ml/shoal/internal/testenv"
)

// The seeds' Python examples run with Azure's own Python SDK (Debian's
// python3-azure: azure-ai-ml 1.4.0) against `shoal server --tls`, and
// `shoal compute show` then prints what the SDK wrote. pydash, which
// azure-ai-ml imports and Debian does not package, is the labelled
// stand-in in compat/azurepy/standin; nothing of the SDK is patched.
func TestAzurePythonSDK(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	mustRun(t, s.env, "user", "create", "--name", "dana", "-o", "none")
	// ci-obo-demo is created for dana: a member of the workspace.
	mustRun(t, s.env, "role", "assign", "--user", "dana", "--role", "Reader", "-o", "none")
	// The SDK signs in as a service principal, as a pipeline would:
	// DefaultAzureCredential reads the AZURE_* variables (see docs/guides/azure-sdks.md).
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-seeds", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-seeds", "--role", "Contributor", "-o", "none")
	key := strings.TrimSpace(readFile(t, sshKey(t, "sdk")+".pub"))
	standin, _ := filepath.Abs("../compat/azurepy/standin")
	cmd := exec.Command("/usr/bin/python3", "testdata/azurepy/seeds.py")
	cmd.Env = append(os.Environ(), "AZUREML_DEV_URL_MFE="+s.url+"/", "REQUESTS_CA_BUNDLE="+filepath.Join(s.dataDir, "tls", "ca.pem"),
		"AZURE_AUTHORITY_HOST="+jsonStr(sp["authority_host"]), "AZURE_TENANT_ID="+jsonStr(sp["tenant_id"]),
		"AZURE_CLIENT_ID="+jsonStr(sp["client_id"]), "AZURE_CLIENT_SECRET="+jsonStr(sp["client_secret"]),
		"PYTHONPATH="+standin, "SSH_KEY="+key)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
	}
	if err != nil {
		t.Fatalf("the seeds' Python examples failed: %v\n%s", err, out)
	}
	steps := map[string]map[string]any{}
	for _, line := range strings.Split(string(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["step"] != nil {
			steps[jsonStr(m["step"])] = m
		}
	}
	want := map[string]map[string]any{
		"cluster":       {"name": "cpu-cluster", "size": "STANDARD_DS3_v2", "max": float64(2), "idle": float64(120)},
		"low_priority":  {"tier": "low_priority"},
		"identity":      {"type": "system_assigned"},
		"instance":      {"state": "Running"},
		"idle_shutdown": {"minutes": float64(30)},
		"ssh":           {"enabled": true, "admin": "azureuser"},
		"on_behalf_of":  {"user": "dana"},
		"schedule":      {"action": "Start", "frequency": "Week", "time_zone": "India Standard Time"}, // REST enums, as Azure returns them
		"stop":          {"state": "Stopped"},
		"start":         {"state": "Running"},
		"restart":       {"state": "Running"},
		"get":           {"max": float64(2)},
		"list_nodes":    {"nodes": float64(0)},
		"setup_scripts": {"command": "echo made-by-the-sdk > setup-ran.txt", "timeout": float64(5)},
		"env_create":    {"name": "sdk-env", "version": "1", "image": "python:3.11"},
		"env_next":      {"version": "2"},
		"env_get":       {"image": "python:3.11", "latest": "2"},
		"data_create":   {"name": "sdk-iris", "version": "1", "type": "uri_file", "path": "https://example.com/iris.csv"},
		"data_get":      {"path": "https://example.com/iris.csv"},
		"model_create":  {"name": "sdk-clf", "version": "1", "type": "custom_model", "path": "https://example.com/clf/model.pkl"},
		"model_get":     {"framework": "sklearn"},
	}
	for step, fields := range want {
		for k, v := range fields {
			if got := steps[step][k]; got != v {
				t.Errorf("step %s: %s = %v, want %v\n%s", step, k, got, v, out)
			}
		}
	}
	if n, _ := steps["list_sizes"]["count"].(float64); n < 10 {
		t.Errorf("list_sizes: %v", steps["list_sizes"])
	}
	if n, _ := steps["list_usage"]["count"].(float64); n < 1 {
		t.Errorf("list_usage: %v", steps["list_usage"])
	}
	names := func(step string) string { b, _ := json.Marshal(steps[step]["names"]); return string(b) }
	if got := names("list"); !strings.Contains(got, `"low-pri-example"`) {
		t.Errorf("list before the delete: %v", got)
	} else {
		for _, name := range []string{"cpu-cluster", "identity-cluster", "ci-basic-demo", "ci-idle-demo", "ci-ssh-demo", "ci-obo-demo", "ci-sched-demo", "ci-setup-demo"} {
			if !strings.Contains(got, `"`+name+`"`) {
				t.Errorf("list: %s missing from %v", name, got)
			}
		}
	}
	if got := names("delete"); !strings.Contains(got, `"cpu-cluster"`) || strings.Contains(got, "low-pri-example") {
		t.Errorf("after begin_delete: %v", got)
	}
	// After archiving version 2: version 1 listed, the environment too.
	if got := names("env_archive"); got != `["sdk-env"]` || fmt.Sprint(steps["env_archive"]["versions"]) != "[1]" {
		t.Errorf("env_archive: %v", steps["env_archive"])
	}
	// What the SDK wrote, as Shoal's CLI shows it.
	show := func(name string) map[string]any {
		return runJSON[map[string]any](t, s.env, "compute", "show", "-n", name, "-o", "json")
	}
	if c := show("cpu-cluster"); c["size"] != "STANDARD_DS3_v2" || c["max_instances"] != float64(2) || c["idle_time_before_scale_down"] != float64(120) {
		t.Errorf("compute show cpu-cluster: %v", c)
	}
	if c := show("identity-cluster"); jsonStr(mapField(c, "identity", "type")) != "system_assigned" {
		t.Errorf("compute show identity-cluster: identity %v", c["identity"])
	}
	if c := show("ci-idle-demo"); c["idle_time_before_shutdown_minutes"] != float64(30) {
		t.Errorf("compute show ci-idle-demo: %v", c["idle_time_before_shutdown_minutes"])
	}
	if c := show("ci-ssh-demo"); c["ssh_public_access_enabled"] != true {
		t.Errorf("compute show ci-ssh-demo: %v", c["ssh_public_access_enabled"])
	}
	if c := show("ci-sched-demo"); !strings.Contains(fmt.Sprint(c["schedules"]), "India Standard Time") || !strings.Contains(strings.ToLower(fmt.Sprint(c["schedules"])), "friday") {
		t.Errorf("compute show ci-sched-demo: schedules %v", c["schedules"])
	}
	if c := show("ci-obo-demo"); jsonStr(mapField(c, "create_on_behalf_of", "user_object_id")) != "dana" {
		t.Errorf("compute show ci-obo-demo: %v", c["create_on_behalf_of"])
	}
	c := show("ci-setup-demo")
	if cs, _ := mapField(c, "setup_scripts", "creation_script").(map[string]any); cs["command"] != "echo made-by-the-sdk > setup-ran.txt" || cs["timeout_minutes"] != float64(5) {
		t.Errorf("compute show ci-setup-demo: setup_scripts %v", c["setup_scripts"])
	}
	if e := runJSON[map[string]any](t, s.env, "environment", "show", "--name", "sdk-env", "--version", "2", "-o", "json"); e["image"] != "python:3.12" || e["archived"] != true {
		t.Errorf("environment show sdk-env 2: %v", e)
	}
	if d := runJSON[map[string]any](t, s.env, "data", "show", "--name", "sdk-iris", "--version", "1", "-o", "json"); d["path"] != "https://example.com/iris.csv" || d["archived"] != true || d["description"] != "made by azure-ai-ml" {
		t.Errorf("data show sdk-iris 1: %v", d)
	}
	// The SDK acted as the service principal: the audit log says so.
	audit := runJSON[[]map[string]any](t, s.env, "audit", "list", "--principal", "sp:sdk-seeds", "-o", "json")
	actions := map[string]int{}
	for _, a := range audit {
		actions[jsonStr(a["action"])+" "+jsonStr(a["outcome"])]++
	}
	if actions["oauth2/token succeeded"] < 1 || actions["computes/write succeeded"] < 7 || actions["computes/delete succeeded"] < 1 {
		t.Errorf("audit of sp:sdk-seeds: %v", actions)
	}
}

// The seed's `MLClient(DefaultAzureCredential(), ...)` runs verbatim in a
// job on a compute with a system-assigned identity: no credential is
// configured; azure-identity finds the job's identity endpoint, and
// azure-ai-ml reaches Shoal through AZUREML_DEV_URL_MFE and the CA
// bundle the job is given.
func TestDefaultAzureCredentialInAJob(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	createCluster(t, s, "msi-sdk", "--max-instances", "1", "--identity-type", "SystemAssigned")
	mustRun(t, s.env, "role", "assign", "--compute", "msi-sdk", "--role", "Reader", "-o", "none")
	standin, _ := filepath.Abs("../compat/azurepy/standin")
	name := submitJob(t, s, writeJobFile(t, `type: command
command: >-
  /usr/bin/python3 -c "from azure.ai.ml import MLClient; from azure.identity import DefaultAzureCredential;
  ml_client = MLClient(DefaultAzureCredential(), '00000000-0000-0000-0000-000000000000', 'ml-project-rg', 'default');
  print('computes:', sorted(c.name for c in ml_client.compute.list()))"
compute: azureml:msi-sdk
environment_variables:
  PYTHONPATH: `+standin+`
`))
	j := waitJob(t, s, name, 90*time.Second, "Completed", "Failed")
	if log := jobLog(t, s, name); j.Status != "Completed" || !strings.Contains(log, "computes: ['msi-sdk']") {
		t.Fatalf("%s:\n%s", j, log)
	}
}

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// idleMinuteConfig makes a minute of idle time last a second, so a
// 15-minute idle shutdown happens after 15 s.
const idleMinuteConfig = fastJobsConfig + "instances:\n  idle_minute: 1s\n"

// A real instance stopped by idle shutdown, another by a cron schedule;
// each says why in last_operation.
func TestInstanceIdleShutdownAndSchedule(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: idleMinuteConfig})
	// idle-ci's idle time counts from its creation: taken before the
	// create, so that a slow second create (a loaded machine) does not
	// shorten the time the check below allows.
	created := time.Now()
	mustRun(t, s.env, "compute", "create", "--name", "idle-ci", "--type", "computeinstance", "--idle-time-before-shutdown-minutes", "15", "-o", "none")
	sched := instanceVariant(t, "schedule-example-i.yml", "expression: 0 18 * * *", `expression: "* * * * *"`)
	mustRun(t, s.env, "compute", "create", "-f", sched, "-o", "none")

	v := showInstance(t, s.env, "idle-ci")
	if v.State != "Running" || v.IdleState == nil {
		t.Fatalf("idle-ci: %s, idle %+v", v, v.IdleState)
	}
	v = waitInstanceState(t, s.env, "idle-ci", 60*time.Second, "Stopped")
	if v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "IdleShutdown" || v.LastOperation.Status != "Succeeded" {
		t.Fatalf("idle-ci stopped by %+v, want Stop by IdleShutdown", v.LastOperation)
	}
	if took := time.Since(created); took < 14*time.Second {
		t.Errorf("idle shutdown after %s; want 15 idle minutes of 1 s", took)
	}
	evs := eventLines(events(t, s, "idle-ci"))
	for _, want := range []string{"idle_shutdown_warning", "postpone-shutdown", "idle_shutdown", "idle_time_before_shutdown_minutes 15"} {
		if !strings.Contains(evs, want) {
			t.Errorf("events of idle-ci lack %q:%s", want, evs)
		}
	}

	// The schedule fires at the next minute, in Pacific time.
	v = waitInstanceState(t, s.env, "schedule-example-i", 90*time.Second, "Stopped")
	if v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "Schedule" {
		t.Fatalf("schedule-example-i stopped by %+v, want Stop by Schedule", v.LastOperation)
	}
	if evs := eventLines(events(t, s, "schedule-example-i")); !strings.Contains(evs, `schedule 1 (cron "* * * * *" Pacific Standard Time) fired`) {
		t.Errorf("no schedule event:%s", evs)
	}
}

// Jobs run on an instance (JobRunning while they do); a job on a stopped
// instance waits and says why, and runs once the user starts it.
func TestInstanceJobs(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	mustRun(t, s.env, "compute", "create", "--name", "job-ci", "--type", "computeinstance", "-o", "none")
	file := writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID; sleep 2\ncompute: azureml:job-ci\n")
	name := submitJob(t, s, file)
	waitJob(t, s, name, 30*time.Second, "Running")
	waitFor(t, 5*time.Second, "the instance to show the job as activity", func() (bool, string) {
		v := showInstance(t, s.env, "job-ci")
		ok := v.State == "JobRunning" && v.IdleState != nil && strings.Contains(strings.Join(v.IdleState.Activity, ";"), "job "+name+" running")
		return ok, fmt.Sprintf("%s, idle %+v", v, v.IdleState)
	})
	j := waitJob(t, s, name, 30*time.Second, "Completed")
	if log := jobLog(t, s, name); !strings.Contains(log, "on job-ci-j") {
		t.Errorf("the job did not run on a job slot of the instance: %q (%s)", log, j)
	}
	// Several jobs at once: one per vCPU by default (4 on STANDARD_DS3_v2).
	// Each runs long enough to be seen running beside the others: the
	// job slots start when the jobs come, and on a loaded 2-core machine
	// the last one joined 1.7 s after the first ran, leaving three
	// 2-second jobs 0.24 s together.
	long := writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID; sleep 10\ncompute: azureml:job-ci\n")
	var names []string
	for range 3 {
		names = append(names, submitJob(t, s, long))
	}
	waitFor(t, 30*time.Second, "three jobs running at once", func() (bool, string) {
		running := 0
		var states []string
		for _, n := range names {
			st := getJob(t, s, n).Status
			if st == "Running" {
				running++
			}
			states = append(states, n+" "+st)
		}
		return running == 3, strings.Join(states, ", ")
	})
	for _, n := range names {
		waitJob(t, s, n, 30*time.Second, "Completed")
	}

	mustRun(t, s.env, "compute", "stop", "-n", "job-ci", "-o", "none")
	waiting := submitJob(t, s, file)
	waitFor(t, 15*time.Second, "the job to say why it waits", func() (bool, string) {
		j := getJob(t, s, waiting)
		return j.Status == "Queued" && strings.Contains(j.StatusReason, "instance stopped: start it"), j.String()
	})
	time.Sleep(time.Second)
	if v := showInstance(t, s.env, "job-ci"); v.State != "Stopped" {
		t.Fatalf("a queued job started the instance: %s", v)
	}
	mustRun(t, s.env, "compute", "start", "-n", "job-ci", "-o", "none")
	waitJob(t, s, waiting, 30*time.Second, "Completed")
	// A job needing more than the instance's one machine is refused.
	big := writeJobFile(t, "type: command\ncommand: hostname\ncompute: azureml:job-ci\nresources:\n  instance_count: 2\n")
	if stderr, _ := mustFail(t, s.env, "job", "create", "-f", big); !strings.Contains(stderr, "resources.instance_count") {
		t.Errorf("a 2-node job on an instance: %s", stderr)
	}
}

// Setup scripts run (creation once, startup at each start) with a kept
// log; a failing one leaves SetupFailed with the log reachable, and the
// instance can be restarted or deleted from there.
func TestInstanceSetupScripts(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "setup-scripts.yml"), "-o", "none")
	mustRun(t, s.env, "compute", "restart", "-n", "setup-example-i", "-o", "none")
	log := mustRun(t, s.env, "compute", "logs", "-n", "setup-example-i", "--setup")
	if strings.Count(log, "creation_script succeeded") != 1 || strings.Count(log, "startup_script succeeded") != 2 {
		t.Errorf("setup log (creation once, startup twice):\n%s", log)
	}
	home := s.nodesDir + "/ci-local-setup-example-i/home/"
	if b := readFile(t, home+"created.txt"); b != "created once\n" {
		t.Errorf("created.txt: %q", b)
	}
	if b := readFile(t, home+"started.txt"); b != "started\nstarted\n" {
		t.Errorf("started.txt: %q", b)
	}

	stderr, _ := mustFail(t, s.env, "compute", "create", "-f", instanceFile(t, "setup-fails.yml"))
	if !strings.Contains(stderr, "StartFailed") && !strings.Contains(stderr, "CreateFailed") {
		t.Errorf("create with a failing setup script: %s", stderr)
	}
	v := showInstance(t, s.env, "setup-fails-i")
	if v.State != "SetupFailed" || v.LastOperation.Status != "CreateFailed" {
		t.Fatalf("after a failed setup: %s", v)
	}
	if log := mustRun(t, s.env, "compute", "logs", "-n", "setup-fails-i", "--setup"); !strings.Contains(log, "scripts/missing.sh") || !strings.Contains(log, "not found") {
		t.Errorf("setup log of the failure:\n%s", log)
	}
	// The user fixes the script and restarts.
	writeFile(t, s.nodesDir+"/ci-local-setup-fails-i/home/scripts/missing.sh", "echo fixed\n")
	mustRun(t, s.env, "compute", "restart", "-n", "setup-fails-i", "-o", "none")
	if v := showInstance(t, s.env, "setup-fails-i"); v.State != "Running" {
		t.Fatalf("after fixing the script and restarting: %s", v)
	}
	mustRun(t, s.env, "compute", "delete", "-n", "setup-fails-i", "--yes")
}

// Created on behalf of a user with a setup script: SSO starts disabled;
// only the assigned user can enable it, not its creator (an admin). Only
// an administrator may create it so: a Contributor's script would run as
// the user's account.
func TestInstanceCreateOnBehalfOf(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Reader", "mallory": "Contributor"})
	// A Contributor may not: the script would run as alice's account.
	if stderr, _ := mustFail(t, users["mallory"], "compute", "create", "-f", instanceVariant(t, "create-on-behalf-of.yml", "behalf-example-i", "mallory-for-alice")); !strings.Contains(stderr, "setup_scripts: they would run as alice's account; only an administrator") {
		t.Errorf("a Contributor creating for alice with a setup script: %s", stderr)
	}
	mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "create-on-behalf-of.yml"), "-o", "none")
	v := showInstance(t, s.env, "behalf-example-i")
	if v.AssignedUser != "alice" || v.EnableSSO == nil || *v.EnableSSO {
		t.Fatalf("created for alice: user %q, sso %v", v.AssignedUser, v.EnableSSO)
	}
	if stderr, _ := mustFail(t, s.env, "compute", "enable-sso", "-n", "behalf-example-i"); !strings.Contains(stderr, "its creator cannot") {
		t.Errorf("the creator enabling SSO: %s", stderr)
	}
	adminTok := s.adminToken(t)
	if code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/behalf-example-i/applications/jupyter/api/kernels", adminTok, nil, nil); code != 403 {
		t.Errorf("the admin at alice's notebook: %d %s", code, body)
	}
	// alice, a Reader, may not enable SSO without the action.
	if stderr, _ := mustFail(t, users["alice"], "compute", "enable-sso", "-n", "behalf-example-i"); !strings.Contains(stderr, "may not") {
		t.Errorf("alice without computes/enableSso/action: %s", stderr)
	}
	mustRun(t, s.env, "role", "create", "--name", "InstanceUser", "--actions", "computes/enableSso/action,computes/applicationaccess/action,computes/start/action,computes/stop/action", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "alice", "--role", "InstanceUser", "-o", "none")
	mustRun(t, users["alice"], "compute", "enable-sso", "-n", "behalf-example-i", "-o", "none")
	if v := showInstance(t, s.env, "behalf-example-i"); !*v.EnableSSO {
		t.Fatalf("SSO after alice enabled it: %v", *v.EnableSSO)
	}
	waitAppsReady(t, users["alice"], "behalf-example-i", "jupyter")
	if code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/behalf-example-i/applications/jupyter/api/contents/welcome.txt", tokenOf(users["alice"]), nil, nil); code != 200 || !strings.Contains(string(body), "set up for alice") {
		t.Errorf("alice reading the file her setup script wrote: %d %s", code, body)
	}
	// Created stopped, for someone else.
	mustRun(t, s.env, "compute", "create", "--name", "later-ci", "--type", "computeinstance", "--user-object-id", "alice", "--stopped", "-o", "none")
	if v := showInstance(t, s.env, "later-ci"); v.State != "Stopped" || v.AssignedUser != "alice" {
		t.Fatalf("created stopped for alice: %s (%s)", v, v.AssignedUser)
	}
	mustRun(t, users["alice"], "compute", "start", "-n", "later-ci", "-o", "none")
}

// The seed's managed identity on an instance: the user's shell gets the
// MSI endpoint and a token from it, and — as in a job — the seed's
// `MLClient(DefaultAzureCredential(), ...)` with nothing configured
// reaches Shoal over HTTPS (AZUREML_DEV_URL_MFE and the CA bundle are in
// the shell's environment).
func TestInstanceManagedIdentity(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	key := sshKey(t, "k")
	mustRun(t, s.env, "compute", "create", "--name", "myinstance", "--identity-type", "SystemAssigned", "--type", "ComputeInstance",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--compute", "myinstance", "--role", "Reader", "-o", "none")
	v := showInstance(t, s.env, "myinstance")
	out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort,
		`curl -sf "$MSI_ENDPOINT?resource=https://management.azure.com&clientid=$DEFAULT_IDENTITY_CLIENT_ID&api-version=2017-09-01" -H "Secret: $MSI_SECRET"`)
	if code != 0 || !strings.Contains(out, `"access_token":"ey`) {
		t.Fatalf("the MSI endpoint from the instance's shell: exit %d, %q, %s", code, out, errOut)
	}
	standin, _ := filepath.Abs("../compat/azurepy/standin")
	out, errOut, code = sshRun(t, key, v.SSHSettings.SSHPort, `PYTHONPATH=`+standin+` /usr/bin/python3 -c "from azure.ai.ml import MLClient; from azure.identity import DefaultAzureCredential;
ml_client = MLClient(DefaultAzureCredential(), '00000000-0000-0000-0000-000000000000', 'ml-project-rg', 'default');
print('computes:', sorted(c.name for c in ml_client.compute.list()))"`)
	if code != 0 || !strings.Contains(out, "computes: ['myinstance']") {
		t.Fatalf("MLClient(DefaultAzureCredential()) in the instance's shell: exit %d, %q, %s", code, out, errOut)
	}
	// Seed 002's own lines for an instance's identity, verbatim but for
	// the names the seed leaves to the reader.
	out, errOut, code = sshRun(t, key, v.SSHSettings.SSHPort, `PYTHONPATH=`+standin+` /usr/bin/python3 -c "import os
subscription_id, resource_group, workspace = '00000000-0000-0000-0000-000000000000', 'ml-project-rg', 'default'
from azure.ai.ml import MLClient
from azure.identity import ManagedIdentityCredential
client_id = os.environ.get('DEFAULT_IDENTITY_CLIENT_ID', None)
credential = ManagedIdentityCredential(client_id=client_id)
ml_client = MLClient(credential, subscription_id, resource_group, workspace)
print('instance:', ml_client.compute.get('myinstance').name)"`)
	if code != 0 || !strings.Contains(out, "instance: myinstance") {
		t.Fatalf("the seed's ManagedIdentityCredential(client_id=DEFAULT_IDENTITY_CLIENT_ID) in the instance's shell: exit %d, %q, %s", code, out, errOut)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An instance outlives its server: killed, the server leaves the instance
// serving SSH; restarted, it adopts the instance as it is.
func TestInstanceSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	key := sshKey(t, "k")
	mustRun(t, s.env, "compute", "create", "--name", "durable-ci", "--type", "computeinstance",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "-o", "none")
	port := showInstance(t, s.env, "durable-ci").SSHSettings.SSHPort
	s.kill9()
	if out, errOut, code := sshRun(t, key, port, "echo still here"); code != 0 || out != "still here\n" {
		t.Fatalf("SSH while the server is down: exit %d, %q, %s", code, out, errOut)
	}
	s.restart()
	waitFor(t, 15*time.Second, "the instance to be running after the restart", func() (bool, string) {
		v := showInstance(t, s.env, "durable-ci")
		return v.State == "Running" && v.SSHSettings.SSHPort == port, v.String()
	})
	time.Sleep(7 * time.Second) // a lease and its grace: the node must not be declared lost
	if v := showInstance(t, s.env, "durable-ci"); v.State != "Running" {
		t.Fatalf("after a lease and its grace: %s", v)
	}
	if out, _, code := sshRun(t, key, port, "echo back"); code != 0 || out != "back\n" {
		t.Fatalf("SSH after the restart: %d %q", code, out)
	}
}

package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
)

// Seed 002's idle-shutdown, schedule and on-behalf-of instances in
// containers, and jobs run on an instance, on one server whose location
// names the test-built instance image. A minute of idle time lasts a
// second (the seed's 30 minutes become 30 s) and the schedule fires every
// minute, so both happen while the test runs.
func TestInstanceContainerSeeds(t *testing.T) {
	// Parallel with the others: most of its time is the wait for the
	// schedule below, and its leak check counts its own agents' containers.
	t.Parallel()
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	s := startServer(t, serverOpts{Config: instanceContainersConfig(image) + "instances:\n  idle_minute: 1s\n",
		Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host, "SHOAL_AGENT_INSECURE_REGISTRIES=" + env.Registry.Addr}})
	users := withUsers(t, s, map[string]string{"alice": "Contributor"})
	alice := users["alice"]

	// The seed's schedule, made to fire a few minutes from now (once an
	// hour, at that minute: the seed's time zone is whole hours off UTC):
	// created first, it is checked to have fired in the last subtest.
	// Firing at every minute raced the container's start, which takes
	// more than the rest of a minute on a loaded machine: the instance
	// was stopped before it ever ran.
	fireAt := time.Now().Add(4 * time.Minute)
	t.Run("schedule seed created", func(t *testing.T) {
		sched := instanceVariant(t, "schedule-example-i.yml", "expression: 0 18 * * *", fmt.Sprintf(`expression: "%d * * * *"`, fireAt.Minute()))
		// --no-wait: the wait is waitInstanceState's 3 minutes; the CLI's own
		// (the run helper's 30 s) was too short for a container's start on a
		// loaded CI machine.
		mustRun(t, s.env, "compute", "create", "-f", sched, "-o", "none", "--no-wait")
		v := waitInstanceState(t, s.env, "schedule-example-i", 3*time.Minute, "Running")
		if v.Schedules == nil || len(v.Schedules.ComputeStartStop) != 1 || v.Schedules.ComputeStartStop[0]["action"] != "stop" {
			t.Errorf("compute show's schedules %+v, want the seed's one stop", v.Schedules)
		}
		if got := showIsolation(t, s.env, "schedule-example-i"); got != "container" {
			t.Errorf("compute show's isolation = %q, want container", got)
		}
		if l := instanceContainers(t, env, "schedule-example-i"); len(l) != 1 {
			t.Errorf("schedule-example-i runs %d containers, want 1", len(l))
		}
		// The leak check below sees this server's containers.
		if l := containersOf(t, env, s.nodesDir); len(l) == 0 {
			t.Errorf("this server's agents have no container, want schedule-example-i's")
		}
	})

	// The seed's idle shutdown (30 minutes of 1 s): the container's own
	// processes (Jupyter at rest) do not keep it busy, it stops by
	// IdleShutdown, and its container goes.
	t.Run("idle shutdown seed", func(t *testing.T) {
		// Measured from before the create: the server counts idle time
		// from the instance's creation, which a loaded machine may answer
		// seconds before the CLI returns (27.9 s measured from its return).
		began := time.Now()
		mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "idle-shutdown.yml"), "-o", "none", "--no-wait")
		waitInstanceState(t, s.env, "idle-example-i", 3*time.Minute, "Running")
		if l := instanceContainers(t, env, "idle-example-i"); len(l) != 1 {
			t.Errorf("idle-example-i runs %d containers, want 1", len(l))
		}
		v := waitInstanceState(t, s.env, "idle-example-i", 2*time.Minute, "Stopped")
		if v.LastOperation == nil || v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "IdleShutdown" {
			t.Fatalf("idle-example-i stopped by %+v, want Stop by IdleShutdown", v.LastOperation)
		}
		if took := time.Since(began); took < 29*time.Second {
			t.Errorf("idle shutdown after %s; want 30 idle minutes of 1 s", took)
		}
		if l := instanceContainers(t, env, "idle-example-i"); len(l) != 0 {
			t.Errorf("idle-example-i Stopped keeps %d container(s)", len(l))
		}
		mustRun(t, s.env, "compute", "delete", "-n", "idle-example-i", "--yes")
	})

	// The seed's instance created by an administrator on behalf of alice:
	// assigned to her, its setup script runs inside as azureuser, none of
	// its processes is root on the host, and its Jupyter answers through
	// the proxy for alice and not for its creator.
	t.Run("on behalf of seed", func(t *testing.T) {
		file := instanceVariant(t, "create-on-behalf-of.yml", "command: echo set up for alice > welcome.txt",
			"command: echo set up for alice > welcome.txt; id -un >> welcome.txt")
		mustRun(t, s.env, "compute", "create", "-f", file, "-o", "none", "--no-wait")
		v := waitInstanceState(t, s.env, "behalf-example-i", 3*time.Minute, "Running")
		if v.AssignedUser != "alice" {
			t.Errorf("assigned_user %q, want alice", v.AssignedUser)
		}
		if got := showIsolation(t, s.env, "behalf-example-i"); got != "container" {
			t.Errorf("compute show's isolation = %q, want container", got)
		}
		home := s.nodesDir + "/ci-local-behalf-example-i/home"
		if got := readHomeFile(t, home, "welcome.txt"); got != "set up for alice\nazureuser\n" {
			t.Errorf("the setup script wrote %q, want it run inside as azureuser", got)
		}
		for _, p := range instanceHostProcs(t, env, "behalf-example-i") {
			if p.uid == 0 {
				t.Errorf("host process %d of the instance's container runs as uid 0: %s", p.pid, p.cmd)
			}
		}
		mustRun(t, alice, "compute", "enable-sso", "-n", "behalf-example-i", "-o", "none")
		v = waitAppsReady(t, alice, "behalf-example-i", "jupyter")
		apps := appsServer(t, s, v, "jupyter")
		path := "/api/v1/workspaces/default/computes/behalf-example-i/applications/jupyter/api/contents/welcome.txt"
		if code, _, body := apps.httpDo(t, "GET", path, tokenOf(alice), nil, nil); code != http.StatusOK || !strings.Contains(string(body), "set up for alice") {
			t.Errorf("alice reading her welcome.txt through the proxy: %d %s", code, body)
		}
		if code, _, body := apps.httpDo(t, "GET", path, s.adminToken(t), nil, nil); code != http.StatusForbidden {
			t.Errorf("the creator at alice's Jupyter: %d %s, want 403", code, body)
		}
		mustRun(t, s.env, "compute", "delete", "-n", "behalf-example-i", "--yes")
	})

	// Jobs on an instance as their compute: a bare job on one of its job
	// slots, not as root, and one with an image of its own that runs in a
	// container of that image (the base image has no Jupyter, the
	// instance's has) while the instance keeps running.
	t.Run("jobs on the instance", func(t *testing.T) {
		mustRun(t, s.env, "compute", "create", "--name", "job-ci", "--type", "computeinstance", "-o", "none", "--no-wait")
		waitInstanceState(t, s.env, "job-ci", 3*time.Minute, "Running")
		// A job that names no environment runs in the instance's image
		// (Jupyter is there, podman, the host's, is not).
		j, log := runToEnd(t, s, writeJobFile(t, "type: command\ncommand: >-\n  echo bare on $SHOAL_NODE_ID uid=$(id -u);\n"+
			"  if command -v jupyter >/dev/null; then echo has-jupyter; else echo NO-JUPYTER; fi;\n"+
			"  if test -e /usr/bin/podman; then echo HOST-PODMAN; else echo no-podman; fi\n"+
			"compute: azureml:job-ci\n"), 4*time.Minute)
		if j.Status != "Completed" || !strings.Contains(log, "bare on job-ci") || strings.Contains(log, "uid=0\n") ||
			!strings.Contains(log, "has-jupyter") || !strings.Contains(log, "no-podman") {
			t.Errorf("a bare job on the instance, in its image: %s\n%s", j, log)
		}
		base := env.Registry.Addr + "/" + testctr.PushedBase
		j, log = runToEnd(t, s, writeJobFile(t, "type: command\ncommand: >-\n  echo in-image;\n"+
			"  if command -v jupyter >/dev/null; then echo HAS-JUPYTER; else echo no-jupyter; fi;\n"+
			"  python3 -c 'print(\"python\", 3)'\n"+
			"compute: azureml:job-ci\nenvironment:\n  image: "+base+"\n"), 4*time.Minute)
		if j.Status != "Completed" {
			t.Fatalf("a job with an image on the instance: %s\n%s", j, log)
		}
		for _, want := range []string{"in a container of " + base, "in-image", "no-jupyter", "python 3"} {
			if !strings.Contains(log, want) {
				t.Errorf("the image job's log lacks %q:\n%s", want, log)
			}
		}
		if v := showInstance(t, s.env, "job-ci"); v.State != "Running" {
			t.Errorf("after the jobs the instance is %s, want Running", v)
		}
		if l := instanceContainers(t, env, "job-ci"); len(l) != 1 {
			t.Errorf("after the jobs job-ci runs %d instance containers, want 1", len(l))
		}
		mustRun(t, s.env, "compute", "delete", "-n", "job-ci", "--yes")
	})

	// By now a minute has turned: the seed's schedule stopped its
	// instance, whose container is gone.
	t.Run("schedule fires", func(t *testing.T) {
		v := waitInstanceState(t, s.env, "schedule-example-i", time.Until(fireAt)+2*time.Minute, "Stopped")
		if v.LastOperation == nil || v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "Schedule" {
			t.Fatalf("schedule-example-i stopped by %+v, want Stop by Schedule", v.LastOperation)
		}
		if l := instanceContainers(t, env, "schedule-example-i"); len(l) != 0 {
			t.Errorf("schedule-example-i Stopped keeps %d container(s)", len(l))
		}
		mustRun(t, s.env, "compute", "delete", "-n", "schedule-example-i", "--yes")
	})

	t.Run("nothing left", func(t *testing.T) {
		waitFor(t, time.Minute, "the instances to be deleted", func() (bool, string) {
			out := mustRun(t, s.env, "compute", "list", "-o", "tsv")
			return strings.TrimSpace(out) == "", out
		})
		assertNoContainersOf(t, env, s.nodesDir)
	})
}

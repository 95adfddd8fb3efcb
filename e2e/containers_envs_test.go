package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A build job: the context next to the job file is uploaded, built on
// the node from the test base image, and the job runs in the result (its
// output shows the file the Dockerfile added); a second job with the same
// context runs in the same image without building again, and its log and
// events say so.
func testContainerBuild(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-build", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	marker := fmt.Sprintf("built-%d", time.Now().UnixNano())
	dir := writeFiles(t, map[string]string{
		"env/Dockerfile": "FROM " + f.env.BaseImage + "\nRUN echo " + marker + " > /etc/shoal-built && echo BUILD-STEP-RAN\n",
		"job.yml":        "command: cat /etc/shoal-built\ncompute: azureml:ctr-build\nenvironment:\n  build:\n    path: ./env\n",
	})
	var logs [2]string
	var evs [2][]map[string]any
	for i := range 2 {
		name := submitJob(t, s, filepath.Join(dir, "job.yml"))
		j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed")
		logs[i], evs[i] = jobLog(t, s, name), jobEvents(t, s, name)
		if j.Status != "Completed" || !strings.Contains(logs[i], marker+"\n") {
			t.Fatalf("job %d: %v; want Completed with %q in its log:\n%s", i+1, j, marker, logs[i])
		}
	}
	if !strings.Contains(logs[0], "BUILD-STEP-RAN") || !hasEventText(evs[0], "building") {
		t.Errorf("the first job did not build (log, events):\n%s%s", logs[0], eventLines(evs[0]))
	}
	if strings.Contains(logs[1], "BUILD-STEP-RAN") || hasEventText(evs[1], "building") {
		t.Errorf("the second job built again (log, events):\n%s%s", logs[1], eventLines(evs[1]))
	}
	if !strings.Contains(logs[1], "was built from this context before: used as it is, not built again") {
		t.Errorf("the second job's log does not say it reused the built image:\n%s", logs[1])
	}
}

// A registered environment with an image, created from YAML, runs as
// azureml:name:1 and azureml:name@latest.
func testContainerRegistered(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-reg", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	dir := writeFiles(t, map[string]string{"env.yml": "$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json\n" +
		"name: e2e-train\nimage: " + f.image + "\ndescription: the test base image\n"})
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "create", "-f", filepath.Join(dir, "env.yml"), "--query", "version", "-o", "tsv")); v != "1" {
		t.Fatalf("environment create printed version %q, want 1", v)
	}
	for _, ref := range []string{"azureml:e2e-train:1", "azureml:e2e-train@latest"} {
		j, log := runToEnd(t, s, writeJobFile(t, "command: python3 -c 'import sys; print(\"python\", sys.version_info[0], \"in\", sys.prefix)'\n"+
			"compute: azureml:ctr-reg\nenvironment: "+ref+"\n"), 3*time.Minute)
		if j.Status != "Completed" || !strings.Contains(log, "in a container of "+f.image) || !strings.Contains(log, "python 3 in /usr") {
			t.Errorf("job with %s: %v; want Completed in a container of %s:\n%s", ref, j, f.image, log)
		}
	}
}

// Azure's curated names, mapped in the server's config to the test
// image, run as Azure's examples name them.
func testContainerCurated(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-cur", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	for _, ref := range []string{
		"azureml://registries/azureml/environments/sklearn-1.5/labels/latest",
		"azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest",
	} {
		j, log := runToEnd(t, s, writeJobFile(t, "command: python3 -c 'print(\"curated ok\")'\ncompute: azureml:ctr-cur\nenvironment: "+ref+"\n"), 3*time.Minute)
		if j.Status != "Completed" || !strings.Contains(log, "in a container of "+f.image) || !strings.Contains(log, "curated ok") {
			t.Errorf("job with %s: %v; want Completed in a container of %s:\n%s", ref, j, f.image, log)
		}
	}
}

// An image the registry does not have fails the job with the registry's
// words, at once: no retry spent, no requeue, and the node stays in
// service (idle, then it runs the next job).
func testContainerPullFailure(t *testing.T, f *ctrFixture) {
	s := f.s
	const cluster = "ctr-pullfail"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	missing := f.env.Registry.Addr + "/shoal-test/missing:1"
	j, log := runToEnd(t, s, writeJobFile(t, "command: echo should-not-run\ncompute: azureml:"+cluster+"\nenvironment:\n  image: "+missing+"\n"), 2*time.Minute)
	if j.Status != "Failed" || !strings.Contains(j.Error, "manifest unknown") || !strings.Contains(j.Error, missing) {
		t.Errorf("%v; want Failed with the registry's words (manifest unknown) naming %s", j, missing)
	}
	if j.AttemptCount != 1 || j.InfraRequeues != 0 || j.FailedAttempts != 0 {
		t.Errorf("%v; want one attempt, no requeue, no retry spent", j)
	}
	if strings.Contains(log, "should-not-run") {
		t.Errorf("the command ran:\n%s", log)
	}
	waitFor(t, 10*time.Second, "the node to be idle after the pull failure", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})
	node := listNodes(t, s, cluster)[0].ID
	j, log = runToEnd(t, s, writeJobFile(t, "command: echo next-job-ran\ncompute: azureml:"+cluster+"\nenvironment:\n  image: "+f.image+"\n"), 2*time.Minute)
	if j.Status != "Completed" || !strings.Contains(log, "next-job-ran") {
		t.Errorf("the next job: %v:\n%s", j, log)
	}
	if a := listAttempts(t, s, j.Name); len(a) != 1 || len(a[0].Ranks) != 1 || a[0].Ranks[0].NodeID != node {
		t.Errorf("the next job did not run on the node the pull failed on (%s): %+v", node, a)
	}
	waitNoContainers(t, f, node)
}

// A private registry with a login: added with the password on standard
// input, after which a job pulling from it succeeds.
func testContainerPrivateRegistry(t *testing.T, f *ctrFixture) {
	s := f.s
	reg := f.env.AuthRegistry
	image := reg.Addr + "/" + "shoal-test/base:1"
	createCluster(t, s, "ctr-auth", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	// Without the login the registry refuses the pull: the job fails with
	// its words. (No other test pulls from this registry into the shared
	// engine, which would then have the image and not pull.)
	j, _ := runToEnd(t, s, writeJobFile(t, "command: echo pulled\ncompute: azureml:ctr-auth\nenvironment:\n  image: "+image+"\n"), 2*time.Minute)
	if j.Status != "Failed" || !strings.Contains(strings.ToLower(j.Error), "unauthorized") {
		t.Errorf("without a login: %v; want Failed, unauthorized", j)
	}
	if _, stderr, code := runStdin(t, s.env, reg.Password+"\n", "registry", "add", "--server", reg.Addr, "--username", reg.User, "--password-stdin", "-o", "none"); code != 0 {
		t.Fatalf("registry add: exit %d: %s", code, stderr)
	}
	j, log := runToEnd(t, s, writeJobFile(t, "command: echo pulled-with-login\ncompute: azureml:ctr-auth\nenvironment:\n  image: "+image+"\n"), 2*time.Minute)
	if j.Status != "Completed" || !strings.Contains(log, "pulled-with-login") {
		t.Errorf("with the login: %v:\n%s", j, log)
	}
	if strings.Contains(log, reg.Password) || strings.Contains(s.log(), reg.Password) {
		t.Errorf("the password shows in the job's log or the server's")
	}
}

package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// The registered environments' round trip through the CLI: create from
// YAML (with a conda file), from flags, from a build context; list; show
// by version and latest; a job naming one gets it resolved and kept; a
// curated name mapped in the config resolves; a reference naming nothing
// is refused at submit with how to fix it; archiving moves latest.
func TestEnvironmentsCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "curated_environments:\n  sklearn-1.5: python:3.11-slim\n"})
	dir := t.TempDir()
	write := dirWriter(t, dir)
	write("conda.yml", "dependencies:\n  - python=3.11\n  - numpy\n")
	envFile := write("env.yml", "$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json\nname: train\nimage: python:3.11\nconda_file: conda.yml\ndescription: training\n")
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "create", "-f", envFile, "--query", "version", "-o", "tsv")); v != "1" {
		t.Fatalf("first version = %q, want 1", v)
	}
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "create", "--name", "train", "--image", "python:3.12", "--query", "version", "-o", "tsv")); v != "2" {
		t.Fatalf("second version = %q, want 2", v)
	}
	if got := mustRun(t, s.env, "environment", "show", "--name", "train", "--version", "1", "--query", "conda_file", "-o", "tsv"); !strings.Contains(got, "numpy") {
		t.Errorf("version 1's conda_file = %q, want the file's content", got)
	}
	write("ctx/Dockerfile", "FROM python:3.11\n")
	if got := mustRun(t, s.env, "environment", "create", "--name", "built", "--build-context", filepath.Join(dir, "ctx"), "--query", "build.path", "-o", "tsv"); !strings.HasPrefix(got, "sha256:") {
		t.Errorf("build.path = %q, want the uploaded context", got)
	}
	_, stderr, code := run(t, s.env, "environment", "create", "--name", "built", "--build-context", filepath.Join(dir, "ctx"), "--dockerfile-path", "train.Dockerfile")
	if code == 0 || !strings.Contains(stderr, "build.dockerfile_path") {
		t.Errorf("a missing Dockerfile: exit %d, %q; want refused naming build.dockerfile_path", code, stderr)
	}
	_, stderr, code = run(t, s.env, "environment", "create", "--name", "bad", "--image", "Not/An Image")
	if code == 0 || !strings.Contains(stderr, "image") {
		t.Errorf("a malformed image: exit %d, %q; want refused naming image", code, stderr)
	}
	list := mustRun(t, s.env, "environment", "list", "-o", "tsv")
	for _, want := range []string{"built\t1\t", "train\t2\tpython:3.12", "train\t1\tpython:3.11"} {
		if !strings.Contains(list, want) {
			t.Errorf("list %q lacks %q", list, want)
		}
	}
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "show", "--name", "train", "--label", "latest", "--query", "version", "-o", "tsv")); v != "2" {
		t.Errorf("latest = %q, want 2", v)
	}

	mustRun(t, s.env, "compute", "create", "--name", "env-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1", "-o", "none")
	submit := func(env string) (string, string, int) {
		return run(t, s.env, "job", "create", "-f", writeJobFile(t, "command: echo hi\ncompute: env-cpu\nenvironment: "+env+"\n"), "--query", "name", "-o", "tsv")
	}
	for env, image := range map[string]string{
		"azureml:train@latest": "python:3.12",
		"azureml:train:1":      "python:3.11",
		"azureml://registries/azureml/environments/sklearn-1.5/labels/latest": "python:3.11-slim",
	} {
		name, stderr, code := submit(env)
		if code != 0 {
			t.Errorf("job with %s: exit %d: %s", env, code, stderr)
			continue
		}
		got := strings.TrimSpace(mustRun(t, s.env, "job", "show", "-n", strings.TrimSpace(name), "--query", "resolved_environment.image", "-o", "tsv"))
		if got != image {
			t.Errorf("job with %s runs image %q, want %q", env, got, image)
		}
	}
	for env, words := range map[string][]string{
		"azureml:nope@latest": {`"nope"`, "shoal environment create"},
		"azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest": {"curated_environments:", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu: <image>"},
	} {
		_, stderr, code := submit(env)
		if code == 0 {
			t.Errorf("job with %s: submitted, want refused", env)
		}
		for _, w := range words {
			if !strings.Contains(stderr, w) {
				t.Errorf("job with %s: %q does not say %q", env, stderr, w)
			}
		}
	}

	mustRun(t, s.env, "environment", "archive", "--name", "train", "--version", "2", "-o", "none")
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "show", "--name", "train", "--label", "latest", "--query", "version", "-o", "tsv")); v != "1" {
		t.Errorf("latest after archiving 2 = %q, want 1", v)
	}
	if list := mustRun(t, s.env, "environment", "list", "-o", "tsv"); strings.Contains(list, "train\t2") {
		t.Errorf("list after archiving shows version 2: %q", list)
	}
	mustRun(t, s.env, "environment", "restore", "--name", "train", "-o", "none")
	if v := strings.TrimSpace(mustRun(t, s.env, "environment", "show", "--name", "train", "--label", "latest", "--query", "version", "-o", "tsv")); v != "2" {
		t.Errorf("latest after restoring = %q, want 2", v)
	}
}

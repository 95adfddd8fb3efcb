package service_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// A job naming a registered environment that does not exist is refused at
// submit, naming it and how to create it: before issue 23 any
// azureml:x@latest was accepted and the job ran on the host.
func TestSubmitRefusesUnknownEnvironment(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 120)
	for _, ref := range []string{"azureml:x@latest", "azureml:x:1", "azureml://registries/azureml/environments/sklearn-1.5/labels/latest"} {
		_, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu", Environment: ref})
		if err == nil {
			t.Errorf("environment %s: submitted, want refused", ref)
			continue
		}
		var e *core.Error
		if !errors.As(err, &e) || e.Field != "environment" {
			t.Errorf("environment %s: %v, want an error on field environment", ref, err)
		}
		if code := core.ErrorCode(err); code != core.EINVALID && code != core.ENOTFOUND {
			t.Errorf("environment %s: code %s, want a 4xx code", ref, code)
		}
		msg := core.ErrorMessage(err)
		if strings.HasPrefix(ref, "azureml:x") && (!strings.Contains(msg, `"x"`) || !strings.Contains(msg, "shoal environment create")) {
			t.Errorf("environment %s: %q does not name the environment and how to create it", ref, msg)
		}
		if strings.Contains(ref, "registries") && (!strings.Contains(msg, "curated_environments:") || !strings.Contains(msg, "sklearn-1.5:")) {
			t.Errorf("environment %s: %q does not give the config lines to add", ref, msg)
		}
	}
	if jobs, err := h.svc.ListJobs(h.ctx, job.JobFilter{Workspace: ws}); err != nil || len(jobs) != 0 {
		t.Errorf("jobs after refusals: %d, %v", len(jobs), err)
	}
}

// A registered environment resolves at submit to the version it names
// (@latest: the one created last, not archived), kept with the job and
// handed to the node; a later version does not change a submitted job.
func TestSubmitResolvesRegisteredEnvironment(t *testing.T) {
	h := newHarness(t, "")
	register := func(name, version, image string) {
		t.Helper()
		if err := h.store.Update(h.ctx, func(tx store.Tx) error {
			return tx.InsertAsset(&asset.Environment{Workspace: ws, Name: name, Version: version, Image: image, OSType: asset.OSTypeLinux})
		}); err != nil {
			t.Fatal(err)
		}
	}
	register("train", "1", "localhost:5000/train:1")
	register("train", "2", "localhost:5000/train:2")
	h.compute("cpu", 0, 1, 600)
	pinned := h.submitSpec(&job.JobSpec{Name: "pinned", Command: "true", Compute: "cpu", Environment: "azureml:train:1"})
	latest := h.submitSpec(&job.JobSpec{Name: "latest", Command: "true", Compute: "cpu", Environment: "azureml:train@latest"})
	if e := pinned.ResolvedEnvironment; e == nil || e.Image != "localhost:5000/train:1" || e.Source != "azureml:train:1" {
		t.Errorf("azureml:train:1 resolved to %+v", e)
	}
	if e := latest.ResolvedEnvironment; e == nil || e.Image != "localhost:5000/train:2" || e.Source != "azureml:train:2" {
		t.Errorf("azureml:train@latest resolved to %+v", e)
	}
	register("train", "3", "localhost:5000/train:3")
	if e := h.job("latest").ResolvedEnvironment; e == nil || e.Image != "localhost:5000/train:2" {
		t.Errorf("stored job's environment after version 3 = %+v, want version 2's, as submitted", e)
	}
	h.step(0)
	h.joinAll()
	h.step(0)
	tasks := h.syncStart(h.nodeIDs("cpu")[0])
	if len(tasks) != 1 || tasks[0].Environment == nil || tasks[0].Environment.Image != "localhost:5000/train:1" {
		t.Fatalf("node's task %s: want the pinned job with image localhost:5000/train:1", describeTasks(tasks))
	}
	events, err := h.svc.ListJobEvents(h.ctx, ws, "pinned")
	if err != nil || !slices.ContainsFunc(events, func(e *core.Event) bool {
		return strings.Contains(e.Reason, "environment azureml:train:1 (image localhost:5000/train:1)")
	}) {
		t.Errorf("pinned's events do not name its environment (%v)", err)
	}
}

// A curated name mapped in the server config resolves to its image; an
// inline image resolves as written; an inline build context must be an
// uploaded artifact; an inline conda file named by its path is refused.
func TestSubmitResolvesCuratedAndInline(t *testing.T) {
	h := newHarness(t, "curated_environments:\n  sklearn-1.5: localhost:5000/azureml/sklearn:1.5\n  AzureML-sklearn-1.0-ubuntu20.04-py38-cpu: localhost:5000/azureml/sklearn:1.0\n")
	h.compute("cpu", 0, 1, 600)
	for ref, image := range map[string]string{
		"azureml://registries/azureml/environments/sklearn-1.5/labels/latest": "localhost:5000/azureml/sklearn:1.5",
		"azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest":             "localhost:5000/azureml/sklearn:1.0",
		"azureml:azureml-sklearn-1.0-ubuntu20.04-py38-cpu:33":                 "localhost:5000/azureml/sklearn:1.0",
	} {
		j, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu", Environment: ref})
		if err != nil {
			t.Errorf("%s: %v", ref, err)
		} else if e := j.ResolvedEnvironment; e == nil || e.Image != image || e.Source != ref {
			t.Errorf("%s resolved to %+v, want image %s", ref, e, image)
		}
	}
	j, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu",
		Environment: map[string]any{"image": "python:3.11", "conda_file": "dependencies:\n- numpy\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := j.ResolvedEnvironment; e == nil || e.Image != "python:3.11" || e.CondaFile != "dependencies:\n- numpy\n" || e.Source != "inline" {
		t.Errorf("inline environment resolved to %+v", e)
	}
	for _, c := range []struct {
		env   map[string]any
		field string
	}{
		{map[string]any{"build": map[string]any{"path": "./ctx"}}, "environment.build.path"},
		{map[string]any{"build": map[string]any{"path": "sha256:" + strings.Repeat("a", 64)}}, "environment.build.path"},
		{map[string]any{"image": "python:3.11", "conda_file": "conda.yml"}, "environment.conda_file"},
		{map[string]any{"image": "Python:3"}, "environment.image"},
		{map[string]any{"image": "python", "build": map[string]any{"path": "x"}}, "environment.build"},
	} {
		_, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu", Environment: c.env})
		var e *core.Error
		if !errors.As(err, &e) || e.Field != c.field || e.Code != core.EINVALID {
			t.Errorf("%v: %v, want EINVALID on %s", c.env, err, c.field)
		}
	}
}

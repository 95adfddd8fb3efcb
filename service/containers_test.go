package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/store"
)

// hostedProvider is the fake provider with one host, as the local
// provider has.
type hostedProvider struct{ *fake.Provider }

func (hostedProvider) Hosts(context.Context) ([]*catalog.Host, error) {
	return []*catalog.Host{{Name: "this machine", Address: "127.0.0.1", Kind: "provider", VCPUs: 16, MemoryGB: 64, State: catalog.HostReady}}, nil
}

// joinWithRuntime joins a provisioned node as its agent would, reporting
// the host's container runtime rt.
func (h *harness) joinWithRuntime(p fake.Provisioned, rt *catalog.ContainerRuntimeInfo) string {
	h.t.Helper()
	id := p.Req.Node.ID
	h.ports++
	port := 5000 + h.ports
	if _, err := h.svc.JoinNode(h.ctx, p.Req.JoinToken, nodekind.JoinRequest{NodeID: id, Address: "127.0.0.1", Port: port, Runtime: rt}); err != nil {
		h.t.Fatalf("join %s: %v", id, err)
	}
	h.agents[id] = &agent{id: id, port: port, running: map[nodekind.RankRef]*nodekind.AgentTask{}}
	h.order = append(h.order, id)
	return id
}

// wantFieldRefusal checks that err refuses field with a 4xx code and says
// every one of parts.
func wantFieldRefusal(t *testing.T, what string, err error, field string, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want refused", what)
		return
	}
	var e *core.Error
	if !errors.As(err, &e) || e.Field != field {
		t.Errorf("%s: %v, want an error on field %s", what, err, field)
	}
	if code := core.ErrorCode(err); code != core.EINVALID && code != core.ENOTFOUND && code != core.ECONFLICT {
		t.Errorf("%s: code %s, want a 4xx code", what, code)
	}
	for _, p := range parts {
		if !strings.Contains(core.ErrorMessage(err), p) {
			t.Errorf("%s: %q does not say %q", what, core.ErrorMessage(err), p)
		}
	}
}

var imageEnv = map[string]any{"image": "localhost:5000/team/train:3"}

// A location with containers: off refuses image jobs and takes bare
// ones; containers: required refuses bare jobs and takes image ones.
func TestSubmitContainerModes(t *testing.T) {
	off := newHarness(t, "locations: [{name: local, containers: off}]")
	off.compute("cpu", 0, 1, 600)
	_, _, err := off.svc.SubmitJob(off.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu", Environment: imageEnv})
	wantFieldRefusal(t, "image job at containers: off", err, "environment", `"local"`, "containers: off")
	off.submitSpec(&job.JobSpec{Name: "bare", Command: "true", Compute: "cpu"})

	req := newHarness(t, "locations: [{name: local, containers: required}]")
	req.compute("cpu", 0, 1, 600)
	_, _, err = req.svc.SubmitJob(req.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu"})
	wantFieldRefusal(t, "bare job at containers: required", err, "environment", `"local"`, "containers: required", "image")
	req.submitSpec(&job.JobSpec{Name: "boxed", Command: "true", Compute: "cpu", Environment: imageEnv})

	opt := newHarness(t, "")
	opt.compute("cpu", 0, 1, 600)
	opt.submitSpec(&job.JobSpec{Name: "bare", Command: "true", Compute: "cpu"})
	opt.submitSpec(&job.JobSpec{Name: "boxed", Command: "true", Compute: "cpu", Environment: imageEnv})
}

// An image job is refused when every host that reported says it has no
// usable runtime, naming the hosts and why; taken while nothing is known
// or when one host has an engine. The runtime is kept with the node and
// shown with its host in the location's detail.
func TestSubmitImageJobNeedsARuntime(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 1, 2, 600)
	// No node has joined: nothing is known, the job is taken.
	h.submitSpec(&job.JobSpec{Name: "unknown", Command: "true", Compute: "cpu", Environment: imageEnv})
	if _, err := h.svc.CancelJob(h.ctx, ws, "unknown"); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	prov := h.prov.TakeProvisioned()
	if len(prov) != 1 {
		t.Fatalf("provisioned %d nodes, want the cluster's minimum of 1", len(prov))
	}
	none := &catalog.ContainerRuntimeInfo{Error: "no Docker socket, and podman is not installed"}
	id := h.joinWithRuntime(prov[0], none)
	_, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu", Environment: imageEnv})
	wantFieldRefusal(t, "image job, host without runtime", err, "environment", "host 127.0.0.1", id, "podman is not installed", "localhost:5000/team/train:3")
	// A job without an image still runs on the host.
	h.submitSpec(&job.JobSpec{Name: "bare", Command: "true", Compute: "cpu"})

	d, err := h.svc.FindLocation(h.ctx, "local")
	if err != nil {
		t.Fatal(err)
	}
	if d.Containers != catalog.ContainersOptional {
		t.Errorf("location containers = %q, want optional", d.Containers)
	}
	if n := h.mustNode("cpu", id); n.Runtime == nil || n.Runtime.Error != none.Error {
		t.Errorf("node's runtime = %+v, want the reported one", n.Runtime)
	}

	// A second node whose host has podman: the image job is taken.
	h.step(0)
	h.submit("two", "cpu", 2, "")
	h.step(0)
	prov = h.prov.TakeProvisioned()
	if len(prov) != 1 {
		t.Fatalf("provisioned %d nodes, want 1 more", len(prov))
	}
	podman := &catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1", StorageDriver: "overlay", StorageRoot: "/var/lib/shoal/containers", FreeBytes: 12_300_000_000, GPUs: nil}
	id2 := h.joinWithRuntime(prov[0], podman)
	h.submitSpec(&job.JobSpec{Name: "boxed", Command: "true", Compute: "cpu", Environment: imageEnv})
	// The location's detail shows the report with the host the nodes
	// run on: the latest joined node's.
	lister := service.New(service.Config{
		Store: h.store, Catalog: h.cat, Files: h.files,
		Providers: map[string]nodekind.Provider{"local": hostedProvider{h.prov}}, ServerURL: "http://shoal.test",
	})
	if d, err = lister.FindLocation(h.ctx, "local"); err != nil {
		t.Fatal(err)
	}
	if len(d.Hosts) != 1 || d.Hosts[0].ContainerRuntimeNode != id2 || d.Hosts[0].ContainerRuntime == nil || d.Hosts[0].ContainerRuntime.Engine != "podman" {
		t.Errorf("location's hosts %+v: want the one host showing node %s's podman", d.Hosts, id2)
	}
	if got := podman.Describe(); !strings.Contains(got, "podman 4.3.1") || !strings.Contains(got, "12.3 GB free") || !strings.Contains(got, "no GPUs visible") {
		t.Errorf("Describe = %q", got)
	}
}

// A task whose job runs an image carries the location's mode, the node's
// size and the logins of the registries its image comes from (and of the
// workspace's push registry) and no other; a task without an image has
// no container part.
func TestTaskCarriesOnlyItsRegistries(t *testing.T) {
	h := newHarness(t, "locations: [{name: local, containers: required}]")
	regs := registries.New(registries.Config{Store: h.store, SecretsKey: h.secretsKey})
	for _, r := range []*asset.RegistryAdd{
		{Server: "localhost:5000", Username: "team", Password: "s3cret-pull"},
		{Server: "other.example.com", Username: "else", Password: "s3cret-other"},
		{Server: "push.example.com:443", Username: "builder", Password: "s3cret-push", Push: true},
	} {
		if _, err := regs.AddRegistry(h.adminCtx(), ws, r); err != nil {
			t.Fatalf("add %s: %v", r, err)
		}
	}
	h.compute("cpu", 0, 1, 600)
	h.submitSpec(&job.JobSpec{Name: "boxed", Command: "true", Compute: "cpu", Environment: imageEnv})
	h.step(0)
	h.joinAll()
	h.step(0)
	node := h.nodeIDs("cpu")[0]
	task := h.start(node)
	ct := task.Container
	if ct == nil {
		t.Fatal("task of an image job has no container part")
	}
	n := h.mustNode("cpu", node)
	if ct.Mode != catalog.ContainersRequired || ct.VCPUs != n.VCPUs || ct.MemoryGB != n.MemoryGB || ct.VCPUs == 0 {
		t.Errorf("container task %+v, want mode required and the node's %d vCPUs, %g GB", ct, n.VCPUs, n.MemoryGB)
	}
	if ct.PushTo != "push.example.com:443/shoal/default" {
		t.Errorf("PushTo = %q, want the push registry's repository for the workspace", ct.PushTo)
	}
	got := map[string]string{}
	for _, c := range ct.Registries {
		got[c.Registry] = c.Username + ":" + c.Password
	}
	want := map[string]string{"localhost:5000": "team:s3cret-pull", "push.example.com:443": "builder:s3cret-push"}
	if len(got) != len(want) || got["localhost:5000"] != want["localhost:5000"] || got["push.example.com:443"] != want["push.example.com:443"] {
		t.Errorf("task's logins %v, want %v (never other.example.com's)", got, want)
	}
	// Nothing the job's users read carries a password.
	events, err := h.svc.ListJobEvents(h.ctx, ws, "boxed")
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for _, e := range events {
		seen.WriteString(e.Reason)
	}
	j, _ := json.Marshal(h.job("boxed"))
	seen.Write(j)
	list, err := regs.ListRegistries(h.ctx, ws)
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	l, _ := json.Marshal(list)
	seen.Write(l)
	seen.WriteString(fmt.Sprint(ct.Registries, task))
	if strings.Contains(seen.String(), "s3cret") {
		t.Errorf("a password shows in what users and logs see: %s", seen.String())
	}
	if !list[2].Push || list[0].Push {
		t.Errorf("push flags %v %v %v, want only push.example.com:443", list[0].Push, list[1].Push, list[2].Push)
	}

	// At rest the password is sealed, under its workspace and server.
	if err := h.store.View(h.ctx, func(tx store.Tx) error {
		stored, err := tx.ListRegistries(ws)
		if err != nil {
			return err
		}
		for _, r := range stored {
			if !sealing.IsSealed(r.SealedPassword) || strings.Contains(r.SealedPassword, "s3cret") {
				t.Errorf("registry %s stored password %q, want it sealed", r.Server, r.SealedPassword)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A bare job's task has no container part; a registry login cannot be
// kept by a server without a secrets key, and says so.
func TestRegistriesNeedASecretsKey(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.submit("bare", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	if task := h.start(h.nodeIDs("cpu")[0]); task.Container != nil {
		t.Errorf("bare job's task has a container part %+v", task.Container)
	}
	keyless := registries.New(registries.Config{Store: h.store})
	_, err := keyless.AddRegistry(h.adminCtx(), ws, &asset.RegistryAdd{Server: "localhost:5000", Username: "u", Password: "p"})
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "secrets_key_file") {
		t.Errorf("add without a secrets key: %v, want refused naming secrets_key_file", err)
	}
	// An insecure registry without a login needs no key.
	if _, err := keyless.AddRegistry(h.adminCtx(), ws, &asset.RegistryAdd{Server: "localhost:5000", Insecure: true}); err != nil {
		t.Errorf("insecure registry without a login: %v", err)
	}
	for _, bad := range []struct {
		req   asset.RegistryAdd
		field string
	}{
		{asset.RegistryAdd{Username: "u", Password: "p"}, "server"},
		{asset.RegistryAdd{Server: "http://localhost:5000", Username: "u", Password: "p"}, "server"},
		{asset.RegistryAdd{Server: "localhost:5000/team", Username: "u", Password: "p"}, "server"},
		{asset.RegistryAdd{Server: "bad host", Username: "u", Password: "p"}, "server"},
		{asset.RegistryAdd{Server: "localhost:5000"}, "username"},
		{asset.RegistryAdd{Server: "localhost:5000", Password: "p"}, "username"},
		{asset.RegistryAdd{Server: "localhost:5000", Username: "u"}, "password"},
	} {
		_, err := keyless.AddRegistry(h.adminCtx(), ws, &bad.req)
		wantFieldRefusal(t, bad.req.String(), err, bad.field)
	}
}

// A job's inline build context is checked at submit as a registered
// environment's is: its Dockerfile must be in it. The node that runs the
// job may then fetch it to build.
func TestSubmitChecksInlineBuildContext(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM python:3.11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := archive.Pack(&buf, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	id, err := h.files.PutArtifact(ws, &buf, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "true", Compute: "cpu",
		Environment: map[string]any{"build": map[string]any{"path": id, "dockerfile_path": "docker/train.Dockerfile"}}})
	wantFieldRefusal(t, "a build without its Dockerfile", err, "environment.build.dockerfile_path", "docker/train.Dockerfile")
	h.submitSpec(&job.JobSpec{Name: "built", Command: "true", Compute: "cpu", Environment: map[string]any{"build": map[string]any{"path": id}}})

	// The node the job runs on builds the image: it may read the build
	// context (as it reads the job's code), and nothing else uploaded.
	h.step(0)
	h.joinAll()
	h.step(0)
	node := h.nodeIDs("cpu")[0]
	if task := h.start(node); task.Environment == nil || task.Environment.Build == nil || task.Environment.Build.Path != id {
		t.Fatalf("the task's environment %+v does not name the build context %s", task.Environment, id)
	}
	rc, err := h.svc.OpenArtifactForNode(h.ctx, node, id)
	if err != nil {
		t.Fatalf("the node reading its job's build context: %v", err)
	}
	rc.Close()
	other := h.upload("not this job's")
	rc, err = h.svc.OpenArtifactForNode(h.ctx, node, other)
	if rc != nil {
		rc.Close()
	}
	wantCode(t, "the node reading an artifact its job does not use", err, core.EFORBIDDEN)
}

// A node's Preparing reports reach the job through ReportRank: its reason
// quotes the progress, the state stays Preparing, an event marks each new
// phase; an image failure then fails the job and frees the node, which is
// not lost.
func TestPreparingReportsAndImageFailure(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	retries := 2
	h.submitSpec(&job.JobSpec{Name: "boxed", Command: "true", Compute: "cpu", Environment: imageEnv, Retries: &retries})
	h.step(0)
	h.joinAll()
	h.step(0)
	node := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(node)
	if len(tasks) != 1 {
		t.Fatalf("tasks %s", describeTasks(tasks))
	}
	task := tasks[0]
	send := func(rep *nodekind.RankReport) {
		t.Helper()
		if _, err := h.svc.ReportRank(h.ctx, node, task.AttemptID, task.Rank, rep); err != nil {
			t.Fatalf("report %+v: %v", rep, err)
		}
	}
	for _, mb := range []int{20, 120, 216} {
		send(&nodekind.RankReport{State: nodekind.RankPreparing, Reason: fmt.Sprintf("pulling localhost:5000/team/train:3 — %d of 216 MB", mb)})
	}
	j := h.wantJob("boxed", job.JobPreparing)
	if want := "attempt 1 preparing: pulling localhost:5000/team/train:3 — 216 of 216 MB"; j.StatusReason != want {
		t.Errorf("job reason %q, want %q", j.StatusReason, want)
	}
	if n := h.countJobEvents("boxed", "pulling"); n != 1 {
		t.Errorf("%d pulling events, want 1 (one per phase)", n)
	}
	send(&nodekind.RankReport{State: nodekind.RankFailed, ExitCode: ptr(-1), Failure: nodekind.RankImageFailed, Reason: "pull localhost:5000/team/train:3: unauthorized: authentication required"})
	j = h.wantJob("boxed", job.JobFailed)
	if !strings.Contains(j.Error, "unauthorized: authentication required") || j.FailedAttempts != 0 || j.AttemptCount != 1 {
		t.Errorf("job error %q, failed attempts %d, attempts %d: want the registry's words, no retry spent, no requeue", j.Error, j.FailedAttempts, j.AttemptCount)
	}
	if n := h.mustNode("cpu", node); n.State != nodekind.NodeIdle {
		t.Errorf("node %s is %s after an image failure, want idle (not lost)", node, n.State)
	}
}

func ptr[T any](v T) *T { return &v }

// countJobEvents counts a job's events whose reason contains substr.
func (h *harness) countJobEvents(job, substr string) int {
	h.t.Helper()
	events, err := h.svc.ListJobEvents(h.ctx, ws, job)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if strings.Contains(e.Reason, substr) {
			n++
		}
	}
	return n
}

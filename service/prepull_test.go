package service_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/registries"
)

// prepullCluster creates cluster name with prepull_images list.
func (h *harness) prepullCluster(name string, list []string) error {
	h.t.Helper()
	minN, maxN, idle := 0, 2, 600
	_, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{
		Name: name, Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle, PrepullImages: list,
	}, "")
	if err != nil {
		return err
	}
	return h.ctrl.ReconcileComputes(h.ctx)
}

// A cluster's prepull_images must each name an image: an environment
// that names nothing, a malformed image and too long a list are refused
// naming the entry.
func TestPrepullImagesRefused(t *testing.T) {
	h := newHarness(t, "")
	err := h.prepullCluster("cpu", []string{"localhost:5000/team/train:3", "azureml:nope@latest"})
	wantFieldRefusal(t, "unregistered environment", err, "prepull_images[1]", `"nope"`, "shoal environment create")
	err = h.prepullCluster("cpu", []string{"Localhost:5000/Team/train:3"})
	wantFieldRefusal(t, "upper-case path", err, "prepull_images[0]", "lower-case")
	var many []string
	for i := range compute.MaxPrepullImages + 1 {
		many = append(many, fmt.Sprintf("localhost:5000/team/img%d:1", i))
	}
	err = h.prepullCluster("cpu", many)
	wantFieldRefusal(t, "too many", err, "prepull_images", fmt.Sprintf("at most %d", compute.MaxPrepullImages))
	err = h.prepullCluster("cpu", []string{"python:3.11", "python:3.11"})
	wantFieldRefusal(t, "twice", err, "prepull_images[1]", "twice")
	err = h.prepullCluster("cpu", []string{"azureml://registries/azureml/environments/sklearn-1.5/labels/latest"})
	wantFieldRefusal(t, "unmapped curated", err, "prepull_images[0]", "curated_environments:")
}

// A node of a cluster with prepull_images gets them (environments
// resolved, with their registry's login) when it joins and takes no work
// until its agent says the pulls ended: the job waits, the node counts as
// preparing. A failed pull makes the node usable anyway, with an event.
// A node without a container runtime pulls nothing and takes work.
func TestPrepullKeepsNodeOutOfPlacement(t *testing.T) {
	h := newHarness(t, "curated_environments:\n  sklearn-1.5: localhost:5000/azureml/sklearn:1.5\n")
	regs := registries.New(registries.Config{Store: h.store, SecretsKey: h.secretsKey})
	if _, err := regs.AddRegistry(h.adminCtx(), ws, &asset.RegistryAdd{Server: "localhost:5000", Username: "team", Password: "s3cret-pull", Insecure: true}); err != nil {
		t.Fatal(err)
	}
	list := []string{"localhost:5000/team/train:3", "azureml://registries/azureml/environments/sklearn-1.5/labels/latest"}
	if err := h.prepullCluster("cpu", list); err != nil {
		t.Fatal(err)
	}
	if c := h.findCompute("cpu"); !slices.Equal(c.PrepullImages, list) {
		t.Fatalf("compute's prepull_images %v, want %v", c.PrepullImages, list)
	}
	h.submitSpec(&job.JobSpec{Name: "first", Command: "true", Compute: "cpu"})
	h.step(0)
	provisioned := h.prov.TakeProvisioned()
	if len(provisioned) != 1 {
		t.Fatalf("%d nodes provisioned, want 1", len(provisioned))
	}
	p := provisioned[0]
	id := p.Req.Node.ID
	rt := &catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1"}
	resp, err := h.svc.JoinNode(h.ctx, p.Req.JoinToken, node.JoinRequest{NodeID: id, Address: "127.0.0.1", Port: 5001, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	h.agents[id] = &agent{id: id, port: 5001, running: map[node.RankRef]*node.AgentTask{}}
	h.order = append(h.order, id)
	wantImages := []string{"localhost:5000/team/train:3", "localhost:5000/azureml/sklearn:1.5"}
	if resp.Prepull == nil || !slices.Equal(resp.Prepull.Images, wantImages) {
		t.Fatalf("join's prepull order %+v, want images %v", resp.Prepull, wantImages)
	}
	if r := resp.Prepull.Registries; len(r) != 1 || r[0].Registry != "localhost:5000" || r[0].Password != "s3cret-pull" || !r[0].Insecure {
		t.Errorf("prepull logins %v, want localhost:5000's (insecure)", r)
	}
	for range 3 {
		h.step(0)
	}
	if got := h.agent(id).started; len(got) != 0 {
		t.Fatalf("a node pulling its images was given work: %v", got)
	}
	n := h.mustNode("cpu", id)
	if !strings.Contains(n.StateReason, "pulling images") || !slices.Equal(n.PullingImages, wantImages) {
		t.Errorf("node reason %q, pulling %v: want it to say it pulls %v", n.StateReason, n.PullingImages, wantImages)
	}
	if c := h.findCompute("cpu"); c.NodeStateCounts.PreparingNodeCount != 1 || c.NodeStateCounts.IdleNodeCount != 0 {
		t.Errorf("node counts %+v, want the pulling node as preparing", c.NodeStateCounts)
	}
	if provisioned := h.prov.TakeProvisioned(); len(provisioned) != 0 {
		t.Errorf("the autoscaler added %d nodes for a job whose node is pulling images", len(provisioned))
	}

	// The pulls end, one failed: the node takes the job.
	withCache := &catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1", CachedImages: 1, CacheBytes: 200 << 20}
	notified := h.notified.Load()
	h.changedMu.Lock()
	h.changed = nil
	h.changedMu.Unlock()
	if _, err := h.svc.SyncNode(h.ctx, id, &node.AgentSyncRequest{Runtime: withCache, Prepulled: &compute.PrepullReport{
		Pulled: wantImages[:1], Failed: []compute.PrepullFailure{{Image: wantImages[1], Error: "manifest unknown"}}, Seconds: 2.5,
	}}, 0); err != nil {
		t.Fatal(err)
	}
	// Free for its own compute's queue alone, as a joined node is: a
	// pass over that queue, not one over every queue's heads.
	h.changedMu.Lock()
	if want := compute.ComputeKey(ws, "cpu"); !slices.Equal(h.changed, []string{want}) || h.notified.Load() != notified {
		t.Errorf("the pulls' end named computes %q and asked for %d passes over every queue, want [%q] and none", h.changed, h.notified.Load()-notified, want)
	}
	h.changedMu.Unlock()
	n = h.mustNode("cpu", id)
	if len(n.PullingImages) != 0 || n.StateReason != "" || n.Runtime == nil || n.Runtime.CachedImages != 1 {
		t.Errorf("after the report: pulling %v, reason %q, runtime %+v", n.PullingImages, n.StateReason, n.Runtime)
	}
	h.wantEvent("cpu", "could not pre-pull localhost:5000/azureml/sklearn:1.5")
	h.wantEvent("cpu", "manifest unknown")
	h.wantEvent("cpu", "pre-pulled 1 of 2 images")
	h.step(0)
	h.step(0)
	if got := h.agent(id).started; len(got) != 1 || got[0].JobName != "first" {
		t.Fatalf("after its pulls the node started %v, want job first", got)
	}

	// A node without a runtime has nothing to pull with: it takes work.
	h.submitSpec(&job.JobSpec{Name: "second", Command: "true", Compute: "cpu"})
	h.step(0)
	for _, p := range h.prov.TakeProvisioned() {
		resp, err := h.svc.JoinNode(h.ctx, p.Req.JoinToken, node.JoinRequest{NodeID: p.Req.Node.ID, Address: "127.0.0.1", Port: 5002,
			Runtime: &catalog.ContainerRuntimeInfo{Error: "podman is not installed"}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Prepull != nil {
			t.Errorf("a node without a runtime got a prepull order %+v", resp.Prepull)
		}
		if n := h.mustNode("cpu", p.Req.Node.ID); len(n.PullingImages) != 0 {
			t.Errorf("a node without a runtime pulls %v", n.PullingImages)
		}
	}
	h.wantEvent("cpu", "prepull_images skipped: no container runtime")
}

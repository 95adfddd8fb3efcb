package service_test

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
)

// gatedReader holds its upload's first read until every upload of a
// test has started: each has passed whatever check comes before the
// bytes flow, so they race as a hostile client's parallel uploads do.
type gatedReader struct {
	r       io.Reader
	once    sync.Once
	started *sync.WaitGroup
	gate    chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.once.Do(func() {
		g.started.Done()
		<-g.gate
	})
	return g.r.Read(p)
}

// raceUploads runs n uploads of size bytes at once, each through put,
// and returns how many succeeded; every failure must be EQUOTA.
func raceUploads(t *testing.T, n, size int, put func(i int, r io.Reader) error) int {
	t.Helper()
	var started, done sync.WaitGroup
	gate := make(chan struct{})
	errs := make([]error, n)
	started.Add(n)
	done.Add(n)
	for i := range n {
		r := &gatedReader{r: bytes.NewReader(bytes.Repeat([]byte{byte('a' + i)}, size)), started: &started, gate: gate}
		go func() {
			defer done.Done()
			errs[i] = put(i, r)
		}()
	}
	started.Wait()
	close(gate)
	done.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "storage_quota"):
			t.Errorf("upload %d: %v; want EQUOTA on storage_quota", i, err)
		}
	}
	return ok
}

func (h *harness) storageUsed() int64 {
	h.t.Helper()
	v, err := h.svc.FindWorkspaceLimits(h.ctx, ws)
	if err != nil {
		h.t.Fatal(err)
	}
	return v.StorageUsedBytes
}

// Parallel uploads cannot together pass the quota: each reserves the
// bytes it streams before storing them, counted with what is stored,
// and gives back what it did not use when it ends, whether it succeeded
// or failed.
func TestParallelArtifactUploadsStayWithinTheQuota(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	quota := int64(1 << 20)
	h.setLimits(nil, &quota)
	ok := raceUploads(t, 8, 900_000, func(_ int, r io.Reader) error {
		_, err := h.svc.PutArtifact(admin, ws, r, 1<<30)
		return err
	})
	if used := h.storageUsed(); ok != 1 || used != 900_000 {
		t.Fatalf("%d of 8 uploads of 900 KB stored, %d bytes used; want 1 and 900000 within a quota of 1 MiB", ok, used)
	}
	// What the winner reserved and did not use, and what the losers
	// reserved, is free again.
	left := quota - 900_000
	if _, err := h.svc.PutArtifact(admin, ws, bytes.NewReader(bytes.Repeat([]byte("z"), int(left))), 1<<30); err != nil {
		t.Fatalf("an upload of the %d bytes left: %v", left, err)
	}
	if _, err := h.svc.PutArtifact(admin, ws, strings.NewReader("1"), 1<<30); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("one byte past a full quota: %v", err)
	}
}

// Agents' output uploads reserve as artifacts do: the ranks of a job
// uploading at once cannot together pass the quota.
func TestParallelOutputUploadsStayWithinTheQuota(t *testing.T) {
	h := newHarness(t, "")
	quota := int64(1 << 20)
	h.setLimits(nil, &quota)
	const ranks = 4
	h.compute("cpu", 0, ranks, 600)
	h.submit("j", "cpu", ranks, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	type slot struct {
		node string
		task *node.AgentTask
	}
	var slots []slot
	for _, n := range h.nodeIDs("cpu") {
		for _, task := range h.syncStart(n) {
			slots = append(slots, slot{n, task})
		}
	}
	if len(slots) != ranks {
		t.Fatalf("%d ranks started; want %d", len(slots), ranks)
	}
	ok := raceUploads(t, ranks, 600_000, func(i int, r io.Reader) error {
		return h.svc.PutRankOutputs(h.ctx, slots[i].node, slots[i].task.AttemptID, slots[i].task.Rank, r)
	})
	if used := h.storageUsed(); ok != 1 || used != 600_000 {
		t.Fatalf("%d of %d output uploads of 600 KB stored, %d bytes used; want 1 and 600000 within a quota of 1 MiB", ok, ranks, used)
	}
}

// Jobs' rank logs count towards the workspace's storage; a log write
// past the quota keeps what fits and one marker line, and is not an
// error: the job runs on, its log stays cut, and retried or later chunks
// change nothing.
func TestRankLogsCountTowardsTheQuota(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	quota := int64(1000)
	h.setLimits(nil, &quota)
	n, task := h.placeOne("j")
	write := func(off int64, data string) {
		t.Helper()
		if err := h.svc.WriteRankLog(h.ctx, n, task.AttemptID, 0, off, []byte(data)); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	before := h.job("j").Status
	write(0, strings.Repeat("a", 600))
	if used := h.storageUsed(); used != 600 {
		t.Fatalf("storage used %d after a 600-byte log; want 600", used)
	}
	if _, err := h.svc.PutArtifact(admin, ws, bytes.NewReader(bytes.Repeat([]byte("x"), 600)), 1<<20); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("an artifact past the quota a log filled: %v", err)
	}
	write(600, strings.Repeat("b", 600)) // crosses the quota
	write(1200, strings.Repeat("c", 100))
	write(600, strings.Repeat("b", 600)) // retried
	want := strings.Repeat("a", 600) + strings.Repeat("b", 400) + money.LogQuotaMarker(quota)
	if got := h.readLog("j", 1, 0); got != want {
		t.Fatalf("stored log %q, want %q", got, want)
	}
	if used := h.storageUsed(); used != int64(len(want)) {
		t.Fatalf("storage used %d; want %d", used, len(want))
	}
	if j := h.job("j"); j.Status != before {
		t.Fatalf("job %s after its log was cut; want it as it was (%s)", j.Status, before)
	}
}

// An instance's setup log counts too, and is cut at the quota the same
// way.
func TestInstanceSetupLogCountsTowardsTheQuota(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	quota := int64(1000)
	h.setLimits(nil, &quota)
	if _, err := h.svc.CreateUser(admin, &identity.User{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.AssignRole(admin, "user:alice", identity.RoleReader, ws); err != nil {
		t.Fatal(err)
	}
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2",
		CreateOnBehalfOf: &compute.CreateOnBehalfOf{UserObjectID: "alice"}}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	node := h.nodeIDs("ci1")[0]
	if err := h.svc.WriteInstanceSetupLog(h.ctx, node, 0, bytes.Repeat([]byte("s"), 700)); err != nil {
		t.Fatal(err)
	}
	if used := h.storageUsed(); used != 700 {
		t.Fatalf("storage used %d after a 700-byte setup log; want 700", used)
	}
	for _, off := range []int64{700, 1000, 700} {
		if err := h.svc.WriteInstanceSetupLog(h.ctx, node, off, bytes.Repeat([]byte("t"), 500)); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	f, err := h.svc.OpenInstanceLog(admin, ws, "ci1", "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if want := strings.Repeat("s", 700) + strings.Repeat("t", 300) + money.LogQuotaMarker(quota); string(got) != want {
		t.Fatalf("stored setup log %q, want %q", got, want)
	}
}

// A chunk retried once the quota is exactly full, which the log holds
// already, is not overwritten by the marker: the marker goes after the
// stored bytes.
func TestLogRetriedAtAFullQuotaKeepsItsBytes(t *testing.T) {
	h := newHarness(t, "")
	quota := int64(1000)
	h.setLimits(nil, &quota)
	n, task := h.placeOne("j")
	for range 2 {
		if err := h.svc.WriteRankLog(h.ctx, n, task.AttemptID, 0, 0, bytes.Repeat([]byte("a"), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := h.readLog("j", 1, 0), strings.Repeat("a", 1000)+money.LogQuotaMarker(quota); got != want {
		t.Fatalf("stored log %q, want %q", got, want)
	}
}

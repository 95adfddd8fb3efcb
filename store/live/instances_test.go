package live_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// Two replicas on one store: what an agent reports to one, the other
// reads; activity alone is written at most every WriteEvery, while the
// replica that heard it reads it at once.
func TestInstancesAcrossReplicas(t *testing.T) {
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	leader := live.NewInstances(live.Config{Store: db, WriteEvery: 10 * time.Second})
	follower := live.NewInstances(live.Config{Store: db, WriteEvery: 10 * time.Second})
	get := func(l *live.Instances) node.InstanceLive {
		t.Helper()
		var out node.InstanceLive
		if err := db.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = l.Get(tx, "default", "dev")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	writes := func() time.Time {
		t.Helper()
		var at time.Time
		db.View(t.Context(), func(tx store.Tx) error {
			l, err := tx.GetInstanceLive("default", "dev")
			if err == nil {
				at = l.ReportedAt
			}
			return nil
		})
		return at
	}
	report := func(l *live.Instances, at time.Time, r node.InstanceReport) bool {
		t.Helper()
		moved, err := l.Report(t.Context(), "default", "dev", "ci-local-dev", &r, at)
		if err != nil {
			t.Fatal(err)
		}
		return moved
	}
	t0 := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	cpu := func(v float64) *float64 { return &v }

	if !report(follower, t0, node.InstanceReport{Phase: node.InstancePhaseSettingUp}) {
		t.Error("a first report does not move the instance")
	}
	running := node.InstanceReport{Phase: node.InstancePhaseRunning, SSHPort: 2222,
		Apps: []compute.InstanceAppReport{{Name: "jupyter", Addr: "127.0.0.1:8888", Running: true, Ready: true}}, CPUPercent: cpu(1)}
	if !report(follower, t0.Add(time.Second), running) {
		t.Error("setup done does not move the instance")
	}
	if l := get(leader); l.Report == nil || l.Report.Phase != node.InstancePhaseRunning || l.Report.SSHPort != 2222 || l.Node != "ci-local-dev" {
		t.Fatalf("the leader reads %+v, want the follower's running report", l)
	}
	// CPU use alone moves on every heartbeat: not written yet.
	busy := running
	busy.CPUPercent = cpu(50)
	if report(follower, t0.Add(2*time.Second), busy) {
		t.Error("a new CPU use moves the instance")
	}
	if got := writes(); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("activity alone was written at once (stored report of %v)", got)
	}
	if l := get(follower); *l.Report.CPUPercent != 50 {
		t.Errorf("the follower, which heard it, reads CPU %v", *l.Report.CPUPercent)
	}
	if l := get(leader); *l.Report.CPUPercent != 1 {
		t.Errorf("the leader reads CPU %v before it was written", *l.Report.CPUPercent)
	}
	// ... but within WriteEvery.
	busy.CPUPercent = cpu(60)
	report(follower, t0.Add(12*time.Second), busy)
	if l := get(leader); *l.Report.CPUPercent != 60 {
		t.Errorf("the leader reads CPU %v after WriteEvery", *l.Report.CPUPercent)
	}
	// An SSH session opening is written at once.
	ssh := busy
	ssh.SSHSessions = 1
	report(follower, t0.Add(13*time.Second), ssh)
	if l := get(leader); l.Report.SSHSessions != 1 {
		t.Errorf("the leader reads %d SSH sessions", l.Report.SSHSessions)
	}

	// The proxy's requests: the first is written, the next within
	// WriteEvery only.
	touch := func(l *live.Instances, at time.Time) {
		t.Helper()
		if err := l.TouchProxy(t.Context(), "default", "dev", at); err != nil {
			t.Fatal(err)
		}
	}
	touch(follower, t0.Add(14*time.Second))
	touch(follower, t0.Add(15*time.Second))
	if got := get(leader).ProxyLastRequest; !got.Equal(t0.Add(14 * time.Second)) {
		t.Errorf("the leader reads the last proxied request at %v, want %v", got, t0.Add(14*time.Second))
	}
	if got := get(follower).ProxyLastRequest; !got.Equal(t0.Add(15 * time.Second)) {
		t.Errorf("the follower reads the last proxied request at %v", got)
	}
	touch(follower, t0.Add(25*time.Second))
	if got := get(leader).ProxyLastRequest; !got.Equal(t0.Add(25 * time.Second)) {
		t.Errorf("the leader reads the last proxied request at %v after WriteEvery", got)
	}

	// The leader releases the node: the follower no longer shows the
	// report it heard before, the proxy's time stays.
	if err := leader.Forget(t.Context(), "default", "dev", t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if l := get(follower); l.Report != nil || l.Node != "" || !l.ProxyLastRequest.Equal(t0.Add(25*time.Second)) {
		t.Errorf("the follower reads %+v after the leader forgot the report", l)
	}
	// Deleted: nothing the follower heard before shows.
	report(follower, t0.Add(31*time.Second), running)
	if err := db.Update(t.Context(), func(tx store.Tx) error { return leader.Delete(tx, "default", "dev") }); err != nil {
		t.Fatal(err)
	}
	if l := get(follower); l.Report != nil || !l.ProxyLastRequest.IsZero() {
		t.Errorf("the follower reads %+v of a deleted instance", l)
	}
}

package workspacetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testInstanceLive covers an instance's live state: a report replaces an
// older one only, the proxy time only moves forward and survives reports,
// a forgotten report (nil) is a report too, names compare
// case-insensitively, and SSH logins are not kept.
func testInstanceLive(t *testing.T, s store.Store, clock *stcheck.Clock) {
	get := func(ws, name string) (*node.InstanceLive, error) {
		var l *node.InstanceLive
		err := s.View(t.Context(), func(tx store.Tx) (err error) {
			l, err = tx.GetInstanceLive(ws, name)
			return err
		})
		return l, err
	}
	put := func(l *node.InstanceLive) bool {
		t.Helper()
		var wrote bool
		stcheck.Update(t, s, func(tx store.Tx) (err error) {
			wrote, err = tx.PutInstanceReport(l)
			return err
		})
		return wrote
	}
	touch := func(ws, name string, at time.Time) {
		t.Helper()
		stcheck.Update(t, s, func(tx store.Tx) error { return tx.TouchInstanceProxy(ws, name, at) })
	}
	_, err := get("default", "dev")
	stcheck.WantCode(t, "GetInstanceLive of a missing instance", err, core.ENOTFOUND)

	t1 := stcheck.Start.Add(time.Second)
	cpu := 12.5
	ssh := stcheck.Start.UTC().Truncate(time.Microsecond)
	report := &node.InstanceReport{
		Phase: node.InstancePhaseRunning, CreationScriptDone: true, SSHPort: 2222, HostKeyFingerprint: "SHA256:x",
		Apps:        []compute.InstanceAppReport{{Name: "jupyter", Addr: "127.0.0.1:8888", Running: true, Ready: true}},
		Kernels:     []node.KernelActivity{{Name: "k1", ExecutionState: "idle", LastActivity: ssh}},
		SSHSessions: 1, SSHLastActivity: &ssh, CPUPercent: &cpu,
		SSHLogins: []node.SSHLogin{{At: ssh, User: "azureuser", Remote: "127.0.0.1:1", Accepted: true}},
	}
	if !put(&node.InstanceLive{Workspace: "default", Compute: "Dev", Node: "ci-local-dev", Report: report, ReportedAt: t1}) {
		t.Error("PutInstanceReport of a first report did not write")
	}
	want := *report
	want.SSHLogins = nil
	l, err := get("DEFAULT", "dev")
	if err != nil {
		t.Fatalf("GetInstanceLive: %v", err)
	}
	stcheck.Equal(t, "the stored live state", l, &node.InstanceLive{Workspace: "default", Compute: "Dev", Node: "ci-local-dev", Report: &want, ReportedAt: stcheck.Now(t1)})

	// The proxy time moves forward only, and a report keeps it.
	p := stcheck.Start.Add(2 * time.Second)
	touch("default", "dev", p)
	touch("default", "DEV", stcheck.Start)
	if l, _ := get("default", "dev"); l == nil || !l.ProxyLastRequest.Equal(stcheck.Now(p)) || l.Report == nil {
		t.Errorf("after touches at %v then earlier: %+v", p, l)
	}
	// An older report (a late write from another replica) is refused.
	if put(&node.InstanceLive{Workspace: "default", Compute: "dev", Node: "ci-local-dev", Report: &node.InstanceReport{Phase: node.InstancePhaseSettingUp}, ReportedAt: stcheck.Start}) {
		t.Error("PutInstanceReport of an older report wrote")
	}
	if l, _ := get("default", "dev"); l == nil || l.Report == nil || l.Report.Phase != node.InstancePhaseRunning {
		t.Errorf("an older report replaced the stored one: %+v", l)
	}
	// Forgotten: no node, no report; the proxy time stays.
	t2 := t1.Add(time.Second)
	if !put(&node.InstanceLive{Workspace: "default", Compute: "dev", ReportedAt: t2}) {
		t.Error("PutInstanceReport forgetting the report did not write")
	}
	l, _ = get("default", "dev")
	stcheck.Equal(t, "the forgotten live state", l, &node.InstanceLive{Workspace: "default", Compute: "dev", ReportedAt: stcheck.Now(t2), ProxyLastRequest: stcheck.Now(p)})

	// A touch of an instance with no live state yet starts one.
	touch("default", "other", p)
	l, _ = get("default", "other")
	stcheck.Equal(t, "the live state started by a touch", l, &node.InstanceLive{Workspace: "default", Compute: "other", ProxyLastRequest: stcheck.Now(p)})

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteInstanceLive("Default", "DEV") })
	_, err = get("default", "dev")
	stcheck.WantCode(t, "GetInstanceLive after DeleteInstanceLive", err, core.ENOTFOUND)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteInstanceLive("default", "dev") })
	if _, err := get("default", "other"); err != nil {
		t.Errorf("another instance's live state after a delete: %v", err)
	}
	if err := s.View(t.Context(), func(tx store.Tx) error { return tx.TouchInstanceProxy("default", "dev", p) }); err == nil {
		t.Error("TouchInstanceProxy in a View succeeded")
	}
}

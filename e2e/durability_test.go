package e2e_test

import (
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"
)

// exampleByFile returns the seed example of a testdata file.
func exampleByFile(t *testing.T, file string) seedExample {
	t.Helper()
	i := slices.IndexFunc(seedExamples, func(e seedExample) bool { return e.File == file })
	if i < 0 {
		t.Fatalf("no seed example uses %s", file)
	}
	return seedExamples[i]
}

// snapshot is what the server returns for one compute.
type snapshot struct {
	compute map[string]any
	events  []map[string]any
}

func takeSnapshot(t *testing.T, s *server, name string) snapshot {
	t.Helper()
	return snapshot{compute: show(t, s, name), events: events(t, s, name)}
}

// sameSnapshot requires the compute and its event log to be unchanged.
func sameSnapshot(t *testing.T, when, name string, before, after snapshot) {
	t.Helper()
	if !reflect.DeepEqual(before.compute, after.compute) {
		var diff []string
		for k := range before.compute {
			if !reflect.DeepEqual(before.compute[k], after.compute[k]) {
				diff = append(diff, k)
			}
		}
		for k := range after.compute {
			if _, ok := before.compute[k]; !ok {
				diff = append(diff, k)
			}
		}
		sort.Strings(diff)
		t.Errorf("%s: compute %s changed in %v:\nbefore %v\nafter  %v", when, name, diff, before.compute, after.compute)
	}
	if !reflect.DeepEqual(before.events, after.events) {
		t.Errorf("%s: event log of %s changed:\nbefore %v\nafter  %v", when, name, before.events, after.events)
	}
}

// TestDurability restarts the server gracefully (SIGTERM) and after SIGKILL:
// every compute a CLI call reported created is still there, unchanged, with
// its event log.
func TestDurability(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	createWorkspaces(t, s.env, seedWorkspaces()...)
	token := s.adminToken(t)

	first := []seedExample{
		exampleByFile(t, "location-example.yml"),
		exampleByFile(t, "low-pri-example.yml"),
		exampleByFile(t, "private-training-cluster.yml"),
	}
	snaps := map[string]snapshot{}
	for _, ex := range first {
		mustRun(t, s.env, ex.createArgs(t)...)
		snaps[ex.Want.Name] = takeSnapshot(t, s, ex.Want.Name)
		checkCompute(t, snaps[ex.Want.Name].compute, ex.Want)
	}

	// Graceful stop: exit code 0, then everything is back.
	s.stop()
	s.restart()
	if got := s.adminToken(t); got != token {
		t.Errorf("admin.token changed across a restart")
	}
	for _, ex := range first {
		sameSnapshot(t, "after SIGTERM and restart", ex.Want.Name, snaps[ex.Want.Name], takeSnapshot(t, s, ex.Want.Name))
	}

	// Two more: one waited for, one --no-wait; SIGKILL as soon as the CLI returned.
	cpu := exampleByFile(t, "cpu-training-cluster.yml")
	mustRun(t, s.env, cpu.createArgs(t)...)
	snaps[cpu.Want.Name] = takeSnapshot(t, s, cpu.Want.Name)
	basic := exampleByFile(t, "basic-example.yml")
	mustRun(t, s.env, append(basic.createArgs(t), "--no-wait")...)
	s.kill9()
	s.restart()

	for _, ex := range append(slices.Clone(first), cpu) {
		sameSnapshot(t, "after SIGKILL and restart", ex.Want.Name, snaps[ex.Want.Name], takeSnapshot(t, s, ex.Want.Name))
	}
	// The --no-wait compute was acknowledged, so it survived; it finishes
	// provisioning (again, if the kill came first) with one provisioned event.
	var c map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c = show(t, s, basic.Want.Name)
		if jsonStr(c["provisioning_state"]) != "Creating" || time.Now().After(deadline) {
			break
		}
	}
	checkCompute(t, c, basic.Want)
	if kinds := eventKinds(events(t, s, basic.Want.Name)); !slices.Equal(kinds, []string{"created", "provisioned"}) {
		t.Errorf("events of %s after SIGKILL and restart = %v, want [created provisioned]", basic.Want.Name, kinds)
	}

	names, _ := listNames(t, s.env, "default")
	want := []string{"basic-example", "cpu-training-cluster", "location-example", "low-pri-example", "private-training-cluster"}
	if !slices.Equal(names, want) {
		t.Errorf("list after the restarts = %v, want %v", names, want)
	}
	// The store still takes writes after the unclean stop.
	mustRun(t, s.env, "compute", "update", "--name", "location-example", "--max-instances", "3")
	if c := show(t, s, "location-example"); jsonInt(c["max_instances"]) != 3 {
		t.Errorf("update after SIGKILL and restart: max_instances %v, want 3", c["max_instances"])
	}
	s.stop()
}

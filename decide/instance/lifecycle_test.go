package instance_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/instance"
	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

var t0 = time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC)

func intp(i int) *int { return &i }

// inst is a Running instance with its node joined and its agent running.
func inst(state string) instance.Input {
	c := &compute.Compute{ProvisioningState: compute.ProvisioningSucceeded, Instance: &compute.InstanceStatus{State: state, AssignedUser: "user:alice"}}
	c.Name, c.Type = "ci", compute.ComputeTypeInstance
	return instance.Input{
		Compute: c,
		Node:    &node.Node{ID: "ci-local-ci", State: node.NodeIdle, Role: node.NodeRoleInstance},
		Report:  &node.InstanceReport{Phase: node.InstancePhaseRunning},
	}
}

func step(t *testing.T, in *instance.Input, now time.Time) instance.Output {
	t.Helper()
	out := instance.Step(*in, now, instance.Config{})
	st := out.Status
	in.Compute.Instance = &st
	return out
}

func hasEvent(out instance.Output, kind, text string) bool {
	for _, e := range out.Events {
		if e.Kind == kind && strings.Contains(e.Reason, text) {
			return true
		}
	}
	return false
}

func TestStartProvisionsThenRuns(t *testing.T) {
	in := inst(compute.InstanceStopped)
	in.Node, in.Report = nil, nil
	instance.RequestStart(in.Compute.Instance, compute.TriggerUser, t0)
	if out := step(t, &in, t0); !out.Provision || in.Compute.Instance.State != compute.InstanceStarting {
		t.Fatalf("start: %+v, state %s", out, in.Compute.Instance.State)
	}
	in.Node = &node.Node{ID: "n", State: node.NodePreparing}
	if out := step(t, &in, t0.Add(time.Second)); out.Provision || in.Compute.Instance.State != compute.InstanceStarting {
		t.Fatalf("while the node prepares: %+v %s", out, in.Compute.Instance.State)
	}
	in.Node.State = node.NodeIdle
	step(t, &in, t0.Add(2*time.Second))
	if in.Compute.Instance.State != compute.InstanceSettingUp {
		t.Fatalf("joined, no report: %s", in.Compute.Instance.State)
	}
	in.Report = &node.InstanceReport{Phase: node.InstancePhaseRunning}
	out := step(t, &in, t0.Add(3*time.Second))
	st := in.Compute.Instance
	if st.State != compute.InstanceRunning || st.Pending != "" || st.LastOperation.OperationStatus != compute.OperationSucceeded || st.LastOperation.OperationName != compute.OperationStart || !hasEvent(out, "instance_running", "") {
		t.Fatalf("running: %+v, events %+v", st, out.Events)
	}
}

func TestSetupFailureAndLostMachine(t *testing.T) {
	in := inst(compute.InstanceCreating)
	st := in.Compute.Instance
	st.Pending, st.PendingOperation, st.PendingTrigger = instance.PendingStart, compute.OperationCreate, compute.TriggerUser
	in.Report = &node.InstanceReport{Phase: node.InstancePhaseSetupFailed, SetupError: "startup_script exited with code 3"}
	out := step(t, &in, t0)
	st = in.Compute.Instance
	if st.State != compute.InstanceSetupFailed || st.LastOperation.OperationStatus != compute.OperationCreateFailed || !strings.Contains(st.SetupError, "code 3") || !hasEvent(out, "instance_setup_failed", "logs") {
		t.Fatalf("setup failed: %+v", st)
	}
	in = inst(compute.InstanceRunning)
	in.Node.State, in.Node.StateReason = node.NodeUnusable, "missed its lease"
	out = step(t, &in, t0)
	if in.Compute.Instance.State != compute.InstanceUnusable || !out.Release || !hasEvent(out, "instance_unusable", "missed its lease") {
		t.Fatalf("lost machine: %s %+v", in.Compute.Instance.State, out)
	}
}

func TestStopAndRestart(t *testing.T) {
	in := inst(compute.InstanceRunning)
	instance.RequestStop(in.Compute.Instance, compute.OperationRestart, compute.TriggerUser, t0)
	if out := step(t, &in, t0); !out.Release || in.Compute.Instance.State != compute.InstanceRestarting {
		t.Fatalf("restart, nodes up: %+v %s", out, in.Compute.Instance.State)
	}
	in.Node, in.Report = nil, nil
	if out := step(t, &in, t0.Add(time.Second)); !out.Provision || in.Compute.Instance.Pending != instance.PendingStart {
		t.Fatalf("restart, nodes gone: %+v %+v", out, in.Compute.Instance)
	}
	in.Node, in.Report = &node.Node{ID: "n", State: node.NodeIdle}, &node.InstanceReport{Phase: node.InstancePhaseRunning}
	step(t, &in, t0.Add(2*time.Second))
	if op := in.Compute.Instance.LastOperation; in.Compute.Instance.State != compute.InstanceRunning || op.OperationName != compute.OperationRestart || op.OperationStatus != compute.OperationSucceeded {
		t.Fatalf("after restart: %+v", in.Compute.Instance)
	}
	instance.RequestStop(in.Compute.Instance, compute.OperationStop, compute.TriggerUser, t0.Add(3*time.Second))
	step(t, &in, t0.Add(3*time.Second))
	in.Node, in.Report = nil, nil
	step(t, &in, t0.Add(4*time.Second))
	if st := in.Compute.Instance; st.State != compute.InstanceStopped || st.LastOperation.OperationName != compute.OperationStop || st.LastOperation.OperationTrigger != compute.TriggerUser {
		t.Fatalf("after stop: %+v", st)
	}
}

// Idle shutdown through the lifecycle: the warning, then the stop with
// trigger IdleShutdown; a running job keeps it up.
func TestIdleShutdownStep(t *testing.T) {
	in := inst(compute.InstanceRunning)
	in.Compute.IdleTimeBeforeShutdownMinutes = intp(15)
	step(t, &in, t0)
	in.Slots = []*node.Node{{ID: "ci-j1", CurrentAttemptID: "a1", CurrentJobName: "train"}}
	out := step(t, &in, t0.Add(20*time.Minute))
	if in.Compute.Instance.Pending != "" || !in.Compute.Instance.IdleActive || len(out.Events) != 0 {
		t.Fatalf("a running job: %+v %+v", in.Compute.Instance, out.Events)
	}
	in.Slots = nil
	jobEnded := t0.Add(20 * time.Minute)
	out = step(t, &in, jobEnded.Add(9*time.Minute))
	if len(out.Events) != 0 {
		t.Fatalf("9 min idle: %+v", out.Events)
	}
	out = step(t, &in, jobEnded.Add(10*time.Minute))
	if !hasEvent(out, "idle_shutdown_warning", "postpone-shutdown") {
		t.Fatalf("10 min idle: no warning %+v", out.Events)
	}
	out = step(t, &in, jobEnded.Add(15*time.Minute))
	st := in.Compute.Instance
	if st.Pending != instance.PendingStop || st.PendingTrigger != compute.TriggerIdleShutdown || !hasEvent(out, "idle_shutdown", "idle for 15 min") {
		t.Fatalf("15 min idle: %+v %+v", st, out.Events)
	}
	in.Node, in.Report = nil, nil
	step(t, &in, jobEnded.Add(15*time.Minute+time.Second))
	if op := in.Compute.Instance.LastOperation; in.Compute.Instance.State != compute.InstanceStopped || op.OperationTrigger != compute.TriggerIdleShutdown {
		t.Fatalf("after idle shutdown: %+v", in.Compute.Instance)
	}
}

// A custom application that runs keeps the instance up (Azure's rule).
func TestCustomAppNeverIdle(t *testing.T) {
	in := inst(compute.InstanceRunning)
	in.Compute.IdleTimeBeforeShutdownMinutes = intp(15)
	in.Report.Apps = []compute.InstanceAppReport{{Name: "rstudio", Running: true}, {Name: "jupyter", Running: true}}
	step(t, &in, t0)
	for h := 1; h <= 72; h++ {
		if out := step(t, &in, t0.Add(time.Duration(h)*time.Hour)); in.Compute.Instance.Pending != "" || len(out.Events) > 0 {
			t.Fatalf("after %d h with a custom app running: %+v", h, out.Events)
		}
	}
}

func schedules(t *testing.T, list ...*compute.ComputeStartStopSchedule) []*schedule.Schedule {
	t.Helper()
	compiled, err := schedule.CompileAll(&compute.ComputeSchedules{ComputeStartStop: list})
	if err != nil {
		t.Fatal(err)
	}
	return compiled
}

func cron(action, expr, tz string) *compute.ComputeStartStopSchedule {
	return &compute.ComputeStartStopSchedule{Action: action, Trigger: &compute.ScheduleTrigger{Type: "cron", Expression: expr, TimeZone: tz}}
}

// The seed's schedule fires at 18:00 Pacific, before and after the DST
// change, with trigger Schedule.
func TestScheduleStopsAcrossDST(t *testing.T) {
	la, _ := time.LoadLocation("America/Los_Angeles")
	for _, day := range []int{7, 9} { // the US changes clocks on 2026-03-08
		in := inst(compute.InstanceRunning)
		in.Schedules = schedules(t, cron("stop", "0 18 * * *", "Pacific Standard Time"))
		start := time.Date(2026, 3, day, 17, 0, 0, 0, la)
		step(t, &in, start)
		step(t, &in, time.Date(2026, 3, day, 17, 59, 30, 0, la))
		if in.Compute.Instance.Pending != "" {
			t.Fatalf("day %d: stopped before 18:00", day)
		}
		at := time.Date(2026, 3, day, 18, 0, 10, 0, la)
		out := step(t, &in, at)
		st := in.Compute.Instance
		if st.Pending != instance.PendingStop || st.PendingTrigger != compute.TriggerSchedule || !hasEvent(out, "schedule_fired", `Pacific Standard Time) fired at 2026-03-0`) {
			t.Fatalf("day %d at %s (UTC %s): %+v %+v", day, at, at.UTC(), st, out.Events)
		}
	}
}

// Schedules missed while the server was down: the latest firing runs
// once at start-up; a firing older than MissedFiringMaxAge is dropped.
func TestMissedFiringRunsOnce(t *testing.T) {
	in := inst(compute.InstanceStopped)
	in.Node, in.Report = nil, nil
	in.Schedules = schedules(t, cron("stop", "0 18 * * *", "UTC"), cron("start", "0 8 * * *", "UTC"))
	checked := time.Date(2026, 3, 5, 17, 0, 0, 0, time.UTC) // the server went down at 17:00
	in.Compute.Instance.SchedulesCheckedAt = &checked
	now := time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC) // and came back the next day at 09:00
	out := step(t, &in, now)
	st := in.Compute.Instance
	if st.Pending != instance.PendingStart || st.PendingTrigger != compute.TriggerSchedule || !hasEvent(out, "schedule_fired", "carried out once") {
		t.Fatalf("after downtime: %+v %+v", st, out.Events)
	}
	if n := len(out.Events); n != 1 {
		t.Fatalf("%d events, want the one start: %+v", n, out.Events)
	}
	// The next pass does not fire again.
	in.Node = &node.Node{ID: "n", State: node.NodePreparing}
	if out := step(t, &in, now.Add(time.Minute)); hasEvent(out, "schedule_fired", "") {
		t.Fatalf("fired twice: %+v", out.Events)
	}

	in = inst(compute.InstanceRunning)
	in.Schedules = schedules(t, cron("stop", "0 18 * * *", "UTC"))
	old := time.Date(2026, 3, 1, 17, 0, 0, 0, time.UTC)
	in.Compute.Instance.SchedulesCheckedAt = &old
	out = step(t, &in, time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC))
	if in.Compute.Instance.Pending != "" || !hasEvent(out, "schedule_missed", "not carried out") {
		t.Fatalf("a firing 18 h old: %+v %+v", in.Compute.Instance, out.Events)
	}
}

// The first pass only notes the time: a schedule does not fire for the
// past when it is created.
func TestNewScheduleDoesNotFireForThePast(t *testing.T) {
	in := inst(compute.InstanceRunning)
	in.Schedules = schedules(t, cron("stop", "0 6 * * *", "UTC"))
	if out := step(t, &in, t0); len(out.Events) != 0 || in.Compute.Instance.Pending != "" {
		t.Fatalf("first pass: %+v", out.Events)
	}
}

// A user who postponed the shutdown skips a scheduled stop meanwhile.
func TestPostponeSkipsScheduledStop(t *testing.T) {
	in := inst(compute.InstanceRunning)
	in.Schedules = schedules(t, cron("stop", "0 18 * * *", "UTC"))
	step(t, &in, time.Date(2026, 3, 6, 17, 0, 0, 0, time.UTC))
	until := time.Date(2026, 3, 6, 19, 0, 0, 0, time.UTC)
	in.Compute.Instance.ShutdownPostponedUntil = &until
	out := step(t, &in, time.Date(2026, 3, 6, 18, 0, 30, 0, time.UTC))
	if in.Compute.Instance.Pending != "" || !hasEvent(out, "schedule_postponed", "postponed") {
		t.Fatalf("postponed: %+v %+v", in.Compute.Instance, out.Events)
	}
}

func TestDeleteReleasesThenRemoves(t *testing.T) {
	in := inst(compute.InstanceRunning)
	in.Compute.ProvisioningState = compute.ProvisioningDeleting
	if out := step(t, &in, t0); !out.Release || out.Delete || in.Compute.Instance.State != compute.InstanceDeleting {
		t.Fatalf("deleting with a node: %+v", out)
	}
	in.Node = nil
	if out := step(t, &in, t0); out.Release || !out.Delete {
		t.Fatalf("deleting without nodes: %+v", out)
	}
}

// An instance whose host has no Jupyter runs without it and says so, as
// an event of its start (the report carries the reason).
func TestStartWithoutJupyterSaysWhy(t *testing.T) {
	in := inst(compute.InstanceStopped)
	in.Node, in.Report = nil, nil
	instance.RequestStart(in.Compute.Instance, compute.TriggerUser, t0)
	step(t, &in, t0)
	in.Node = &node.Node{ID: "n", State: node.NodeIdle}
	in.Report = &node.InstanceReport{Phase: node.InstancePhaseRunning, Apps: []compute.InstanceAppReport{
		{Name: "jupyter", Error: "Jupyter is not installed on this host: apt-get install jupyter-notebook"},
		{Name: "web", Addr: "127.0.0.1:1", Running: true}}}
	out := step(t, &in, t0.Add(time.Second))
	if in.Compute.Instance.State != compute.InstanceRunning || !hasEvent(out, "application_unavailable", "jupyter does not run: Jupyter is not installed") {
		t.Fatalf("state %s, events %+v", in.Compute.Instance.State, out.Events)
	}
	if hasEvent(out, "application_unavailable", "web") {
		t.Errorf("a running application was reported unavailable: %+v", out.Events)
	}
	// Not said again on every pass.
	if out := step(t, &in, t0.Add(2*time.Second)); hasEvent(out, "application_unavailable", "") {
		t.Errorf("said again: %+v", out.Events)
	}
}

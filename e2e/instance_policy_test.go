package e2e_test

import (
	"strings"
	"testing"
)

// The server's instance policy, as the seed's Azure Policy: a default
// shutdown schedule (22:00 Pacific) added to instances created without
// one, and a cap on the idle time. A user with only
// computes/updateSchedules/action changes schedules.
const policyConfig = fastJobsConfig + `instances:
  max_idle_time_before_shutdown_minutes: 120
  default_idle_time_before_shutdown_minutes: 60
  default_schedules:
    compute_start_stop:
      - action: stop
        trigger:
          type: cron
          start_time: "2021-03-10T21:21:07"
          time_zone: Pacific Standard Time
          expression: "0 22 * * *"
`

func TestInstancePolicy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: policyConfig})
	mustRun(t, s.env, "compute", "create", "--name", "pol-ci", "--type", "computeinstance", "--stopped", "-o", "none")
	v := showInstance(t, s.env, "pol-ci")
	if v.Schedules == nil || len(v.Schedules.ComputeStartStop) != 1 || v.IdleMinutes == nil || *v.IdleMinutes != 60 {
		t.Fatalf("policy defaults not applied: schedules %+v, idle %v", v.Schedules, v.IdleMinutes)
	}
	trig, _ := v.Schedules.ComputeStartStop[0]["trigger"].(map[string]any)
	if jsonStr(trig["expression"]) != "0 22 * * *" {
		t.Errorf("default schedule %+v", v.Schedules.ComputeStartStop[0])
	}
	// An instance with its own schedules keeps them.
	mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "schedule-example-i.yml"), "--stopped", "-o", "none")
	if v := showInstance(t, s.env, "schedule-example-i"); len(v.Schedules.ComputeStartStop) != 1 || jsonStr(v.Schedules.ComputeStartStop[0]["trigger"].(map[string]any)["expression"]) != "0 18 * * *" {
		t.Errorf("the instance's own schedule was replaced: %+v", v.Schedules)
	}
	// The cap.
	stderr, _ := mustFail(t, s.env, "compute", "update", "-n", "pol-ci", "--idle-time-before-shutdown-minutes", "240")
	if !strings.Contains(stderr, "idle_time_before_shutdown_minutes") || !strings.Contains(stderr, "at most 120") {
		t.Errorf("above the cap: %s", stderr)
	}
	// The bounds, at creation and on update (and the REST body of Azure).
	for _, m := range []string{"14", "4321"} {
		stderr, _ := mustFail(t, s.env, "compute", "update", "-n", "pol-ci", "--idle-time-before-shutdown-minutes", m)
		if !strings.Contains(stderr, "between 15 and 4320") {
			t.Errorf("idle %s: %s", m, stderr)
		}
	}
	tok := s.adminToken(t)
	code, _, body := s.httpDo(t, "POST", "/api/v1/workspaces/default/computes/pol-ci/updateIdleShutdownSetting", tok, []byte(`{"idleTimeBeforeShutdown": "PT30M"}`), nil)
	if code != 200 || !strings.Contains(string(body), `"idle_time_before_shutdown_minutes":30`) {
		t.Errorf("updateIdleShutdownSetting PT30M: %d %s", code, body)
	}
	code, _, body = s.httpDo(t, "POST", "/api/v1/workspaces/default/computes/pol-ci/updateIdleShutdownSetting", tok, []byte(`{"idleTimeBeforeShutdown": "PT5M"}`), nil)
	if code != 400 || !strings.Contains(string(body), "between 15 and 4320") {
		t.Errorf("updateIdleShutdownSetting PT5M: %d %s", code, body)
	}

	// A user who may only update schedules.
	mustRun(t, s.env, "role", "create", "--name", "Scheduler", "--actions", "computes/read,computes/updateSchedules/action", "-o", "none")
	users := withUsers(t, s, map[string]string{"sam": "Scheduler"})
	body2 := []byte(`{"schedules": {"compute_start_stop": [{"action": "start", "trigger": {"type": "recurrence", "frequency": "day", "interval": 1, "time_zone": "India Standard Time", "schedule": {"hours": [9], "minutes": [0]}}}]}}`)
	code, _, body = s.httpDo(t, "POST", "/api/v1/workspaces/default/computes/pol-ci/updateSchedules", tokenOf(users["sam"]), body2, nil)
	if code != 200 || !strings.Contains(string(body), "India Standard Time") {
		t.Errorf("updateSchedules by sam: %d %s", code, body)
	}
	refused(t, users["sam"], "sam", "compute", "update", "-n", "pol-ci", "--description", "x")
	five := []byte(`{"schedules": {"compute_start_stop": [` + strings.Repeat(`{"action": "stop", "trigger": {"type": "cron", "expression": "0 18 * * *"}},`, 4) + `{"action": "stop", "trigger": {"type": "cron", "expression": "0 19 * * *"}}]}}`)
	code, _, body = s.httpDo(t, "POST", "/api/v1/workspaces/default/computes/pol-ci/updateSchedules", tokenOf(users["sam"]), five, nil)
	if code != 400 || !strings.Contains(string(body), "at most 4 schedules") {
		t.Errorf("five schedules: %d %s", code, body)
	}
}

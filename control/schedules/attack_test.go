package schedules

import (
	"fmt"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"slices"

	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/service/schedules"
)

// Attack: a schedule updated (a new trigger and job) between the loop's
// reading it and its firing: the firing the loop found for the old
// trigger, before the update, is not acted on with the new job (nor at
// all: firings before a schedule's last write are never caught up).
// The same for a schedule disabled and enabled again meanwhile.
func TestFiringFoundBeforeAnUpdateIsDropped(t *testing.T) {
	for _, change := range []string{"update", "disable and enable"} {
		t.Run(change, func(t *testing.T) {
			h := newHarness(t)
			h.clock.Set(time.Date(2025, 3, 14, 14, 10, 0, 0, time.UTC))
			old := h.create(`{"name": "s", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`)
			now := time.Date(2025, 3, 14, 15, 0, 30, 0, time.UTC)
			h.clock.Set(now)
			at, ok := Due(old, now) // the loop read it
			if !ok {
				t.Fatal("not due")
			}
			switch change {
			case "update":
				h.create(`{"name": "s", "trigger": {"type": "cron", "expression": "30 * * * *"}, "create_job": ` + strings.Replace(jobDoc, "echo", "echo new", 1) + `}`)
			default:
				for _, on := range []bool{false, true} {
					if _, err := schedules.Over(h.svc).SetEnabled(h.bob, "ws", "s", on); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := schedules.Over(h.svc).Fire(h.bob, "ws", "s", schedules.Firing{At: at}, now); err != nil {
				t.Fatal(err)
			}
			if got := h.scheduled(); len(got) != 0 {
				t.Errorf("a firing found before the schedule's %s was acted on: %s %q", change, got[0].Name, got[0].Command)
			}
		})
	}
}

// Attack: a job that the schedule did not submit already holds the name
// of a firing's job (a user named a job so): the firing does not claim
// it as its own (LastJob, "already submitted"), nor touch its tags; it
// is recorded as failed, naming the job.
func TestFiredNameTakenByAnotherJob(t *testing.T) {
	for _, doc := range []string{"different", "same"} {
		t.Run(doc, func(t *testing.T) {
			h := newHarness(t)
			h.clock.Set(time.Date(2025, 3, 14, 14, 10, 0, 0, time.UTC))
			h.create(`{"name": "s", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": {"type": "command", "command": "echo hi", "compute": "azureml:cpu", "environment": {"image": "python:3.12"}}}`)
			body := `{"name": "s-20250314t1500", "type": "command", "command": "echo mine", "compute": "azureml:cpu", "environment": {"image": "python:3.12"}, "tags": {"owner": "me"}}`
			if doc == "same" {
				body = strings.Replace(body, "echo mine", "echo hi", 1)
			}
			if _, _, err := h.svc.SubmitJobDocument(h.bob, "ws", "", []byte(body)); err != nil {
				t.Fatal(err)
			}
			h.clock.Set(time.Date(2025, 3, 14, 15, 0, 5, 0, time.UTC))
			h.pass()
			sc := h.get("s")
			if sc.Status.LastJob == "s-20250314t1500" || !strings.Contains(sc.Status.LastMessage, "s-20250314t1500") || !strings.Contains(sc.Status.LastMessage, "not") {
				t.Errorf("status = %+v", sc.Status)
			}
			j, err := h.svc.FindJob(t.Context(), "ws", "s-20250314t1500")
			if err != nil {
				t.Fatal(err)
			}
			if j.Tags["owner"] != "me" || len(j.Tags) != 1 {
				t.Errorf("the user's job's tags were changed: %v", j.Tags)
			}
		})
	}
}

// Attack: create_job naming a job by the ARM id of another workspace
// (azureml:/subscriptions/…/workspaces/other/jobs/base) is refused
// naming create_job, rather than read as the job of that name in the
// schedule's own workspace (a different job); the schedule's own
// workspace's id is taken.
func TestExistingJobOfAnotherWorkspace(t *testing.T) {
	h := newHarness(t)
	if _, _, err := h.svc.SubmitJobDocument(h.bob, "ws", "", []byte(`{"name": "base", "type": "command", "command": "echo base", "compute": "azureml:cpu", "environment": {"image": "python:3.12"}}`)); err != nil {
		t.Fatal(err)
	}
	const id = "azureml:/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/%s/jobs/base"
	for _, c := range []struct {
		ws string
		ok bool
	}{{"other", false}, {"WS", true}} {
		sc, err := dschedule.Decode([]byte(`{"name": "x", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": "` + fmt.Sprintf(id, c.ws) + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = schedules.Over(h.svc).CreateOrUpdate(h.bob, "ws", sc)
		if c.ok && err != nil {
			t.Errorf("own workspace's id: %v", err)
		}
		if !c.ok && (core.ErrorField(err) != "create_job" || !strings.Contains(core.ErrorMessage(err), "other")) {
			t.Errorf("another workspace's job: %v", err)
		}
	}
}

// Attack: a cron firing every minute, whose server was down for a year,
// starts one job (the latest missed firing), not a backlog.
func TestAYearMissedStartsOnce(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(time.Date(2025, 1, 1, 0, 0, 30, 0, time.UTC))
	h.create(`{"name": "m", "trigger": {"type": "cron", "expression": "* * * * *"}, "create_job": ` + jobDoc + `}`)
	h.clock.Set(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
	h.pass()
	h.pass()
	got := h.scheduled()
	if len(got) != 1 || got[0].Name != "m-20260101t0000" {
		t.Fatalf("jobs = %v, want m-20260101t0000 alone", got)
	}
}

// Attack: daylight saving time. 01:30 happens twice on the day New York
// falls back: a daily 01:30 fires once. 02:30 does not happen on the day
// it springs forward: nothing fires twice, and the next day's fires.
func TestDaylightSavingTime(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC))
	h.create(`{"name": "back", "trigger": {"type": "cron", "expression": "30 1 * * *", "time_zone": "Eastern Standard Time"}, "create_job": ` + jobDoc + `}`)
	for _, at := range []time.Time{
		time.Date(2025, 11, 2, 5, 30, 10, 0, time.UTC), // 01:30 EDT
		time.Date(2025, 11, 2, 6, 30, 10, 0, time.UTC), // 01:30 EST
		time.Date(2025, 11, 2, 7, 30, 10, 0, time.UTC),
	} {
		h.clock.Set(at)
		h.pass()
	}
	if got := h.scheduled(); len(got) != 1 {
		t.Errorf("fall back: %d jobs on the day, want 1: %v", len(got), names(got))
	}

	h = newHarness(t)
	h.clock.Set(time.Date(2025, 3, 8, 12, 0, 0, 0, time.UTC))
	h.create(`{"name": "fwd", "trigger": {"type": "cron", "expression": "30 2 * * *", "time_zone": "America/New_York"}, "create_job": ` + jobDoc + `}`)
	for at := time.Date(2025, 3, 9, 5, 0, 10, 0, time.UTC); at.Before(time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)); at = at.Add(30 * time.Minute) {
		h.clock.Set(at)
		h.pass()
	}
	got := names(h.scheduled())
	if len(got) > 2 || !slices.Contains(got, "fwd-20250310t0630") {
		t.Errorf("spring forward: jobs %v, want at most one on the 9th and the 10th's at 06:30 UTC", got)
	}
}

func names(js []*job.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.Name)
	}
	return out
}

// Attack: a schedule whose last writer was disabled (their login and
// tokens refused) but kept their role does not go on submitting jobs as
// them.
func TestDisabledUserIsSkipped(t *testing.T) {
	h := newHarness(t)
	h.create(`{"name": "n", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`)
	admin := identity.WithPrincipal(t.Context(), &identity.Principal{ID: identity.AdminPrincipalID, Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if _, err := h.svc.SetUserDisabled(admin, "bob", true); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	h.pass()
	if got := h.scheduled(); len(got) != 0 {
		t.Fatalf("fired as a disabled user: %v", names(got))
	}
	if sc := h.get("n"); !strings.Contains(sc.Status.LastMessage, "bob may no longer submit jobs") {
		t.Errorf("status = %+v", sc.Status)
	}
}

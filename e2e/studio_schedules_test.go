package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStudioSchedule: in a browser, the schedules list leads to a
// schedule's page; its Disable button disables it (the page then offers
// Enable, and `shoal schedule show` agrees), and Run now fires a job and
// opens the job's page; the schedule's page then lists the job and the
// firing's event.
func TestStudioSchedule(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	admin := s.adminToken(t)
	createCluster(t, s, "sched-ui", "--max-instances", "1")
	dir := writeFiles(t, map[string]string{
		"job.yml":      "type: command\ncommand: echo from the studio\ncompute: azureml:sched-ui\n",
		"schedule.yml": "name: nightly-ui\ntrigger:\n  type: cron\n  expression: \"0 2 * * *\"\n  time_zone: Pacific Standard Time\ncreate_job: ./job.yml\n",
	})
	mustRun(t, s.env, "schedule", "create", "-f", filepath.Join(dir, "schedule.yml"), "-o", "none")

	ctx := browser(t)
	signIn(t, ctx, s.url, admin)
	open(t, ctx, "the schedules", s.url+"/schedules", "#schedules")
	if got := js[string](t, ctx, `document.getElementById("schedules").textContent`); !strings.Contains(got, "cron 0 2 * * * (Pacific Standard Time)") {
		t.Errorf("the list's trigger: %q", got)
	}
	browse(t, ctx, "the schedule's page", chromedp.Click(`#schedules a[href="/schedules/nightly-ui"]`), chromedp.WaitVisible(`button[data-schedule-op="disable"]`))
	shot(t, ctx, "schedule")
	browse(t, ctx, "disable", chromedp.Click(`button[data-schedule-op="disable"]`), chromedp.WaitVisible(`button[data-schedule-op="enable"]`))
	if out := mustRun(t, s.env, "schedule", "show", "-n", "nightly-ui", "--query", "is_enabled", "-o", "json"); strings.TrimSpace(out) != "false" {
		t.Errorf("after Disable, is_enabled = %s", out)
	}
	browse(t, ctx, "run now", chromedp.Click(`button[data-schedule-op="trigger"]`))
	waitJS(t, ctx, 10*time.Second, "the fired job's page", `location.pathname.startsWith("/jobs/nightly-ui-")`)
	name := strings.TrimPrefix(js[string](t, ctx, `location.pathname`), "/jobs/")
	waitJob(t, s, name, 60*time.Second, "Completed")
	open(t, ctx, "the schedule's jobs", s.url+"/schedules/nightly-ui", "#schedule-jobs")
	if got := js[string](t, ctx, `document.getElementById("schedule-jobs").textContent + document.getElementById("schedule-events").textContent`); !strings.Contains(got, name) || !strings.Contains(got, "schedule_fired") {
		t.Errorf("the schedule's page does not list %s and its event: %q", name, got)
	}
}

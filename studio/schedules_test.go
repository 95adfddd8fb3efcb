package studio_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
)

// The schedule pages list the workspace's schedules (the trigger in
// words, enabled, next fire, last job linked, last message) and show one
// (trigger, action, recent jobs, events). A Contributor gets the
// disable and run-now buttons, whose posts (the API's routes, with the
// session and its CSRF header) fire a job the page then lists with the
// firing's event; a Reader reads the pages without buttons, and their
// forged post is refused, as is a Contributor's without the CSRF
// header. Markup in a description stays text; a user without a role in
// the workspace is refused the pages.
func TestSchedulePages(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	carl := userWithRole(t, svc, admin, "carl", "Contributor")
	rita := userWithRole(t, svc, admin, "rita", "Reader")
	maxN := 2
	if _, _, err := svc.CreateOrApplyCompute(admin, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	doc := `{"name":"nightly","description":"<script>alert(1)</script>","trigger":{"type":"recurrence","frequency":"week","interval":1,
		"schedule":{"hours":[10],"minutes":[0],"week_days":["monday","friday"]},"time_zone":"Pacific Standard Time"},
		"create_job":{"job":{"type":"command","command":"echo hi","compute":"azureml:cpu"}}}`
	status, b := call(t, ts, "PUT", "/api/v1/workspaces/default/schedules/nightly", doc, func(req *http.Request) {
		req.Header.Set("Authorization", "Bearer "+carl)
		req.Header.Set("Content-Type", "application/json")
	})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, b)
	}

	status, list := page(t, ts, "/schedules", rita)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, list)
	}
	for _, want := range []string{`href="/schedules/nightly"`, "every 1 week, hours 10, minutes 0, on monday friday (Pacific Standard Time)", "<td>yes</td>", "<time datetime=", `href="/schedules" aria-current="page"`} {
		if !strings.Contains(list, want) {
			t.Errorf("list misses %s", want)
		}
	}
	status, detail := page(t, ts, "/schedules/nightly", rita)
	if status != http.StatusOK {
		t.Fatalf("schedule: %d %s", status, detail)
	}
	for _, want := range []string{"submit a command job", "carl (its last writer)", "&lt;script&gt;alert(1)&lt;/script&gt;", "No jobs yet.", "No events yet."} {
		if !strings.Contains(detail, want) {
			t.Errorf("schedule page misses %s", want)
		}
	}
	if strings.Contains(detail, "<script>alert(1)") {
		t.Error("a description's markup is not escaped")
	}
	if strings.Contains(detail, "data-schedule-op") {
		t.Error("a Reader is offered the schedule's buttons")
	}

	const trigger = "/api/v1/workspaces/default/schedules/nightly/trigger"
	if code, b := apiPost(t, ts, trigger, rita, "", true, "application/json"); code != http.StatusForbidden {
		t.Errorf("a Reader's forged trigger: %d %s, want 403", code, b)
	}
	if code, b := apiPost(t, ts, "/api/v1/workspaces/default/schedules/nightly/disable", carl, "", false, "application/json"); code != http.StatusForbidden {
		t.Errorf("a disable without the CSRF header: %d %s, want 403", code, b)
	}
	if jobs, err := svc.ListJobs(admin, job.JobFilter{Workspace: "default"}); err != nil || len(jobs) != 0 {
		t.Fatalf("a refused trigger started a job: %v %v", jobs, err)
	}

	_, buttons := page(t, ts, "/schedules/nightly", carl)
	for _, want := range []string{`data-schedule-op="disable" data-name="nightly"`, `data-schedule-op="trigger" data-name="nightly"`} {
		if !strings.Contains(buttons, want) {
			t.Errorf("a Contributor's page misses %s", want)
		}
	}
	code, b := apiPost(t, ts, trigger, carl, "", true, "application/json")
	if code != http.StatusCreated {
		t.Fatalf("the button's trigger: %d %s", code, b)
	}
	var j job.Job
	if err := json.Unmarshal(b, &j); err != nil || !strings.HasPrefix(j.Name, "nightly-") {
		t.Fatalf("the triggered job: %v %s", err, b)
	}
	_, detail = page(t, ts, "/schedules/nightly", rita)
	for _, want := range []string{`<a href="/jobs/` + j.Name + `">` + j.Name + `</a>`, "schedule_fired", "triggered by carl"} {
		if !strings.Contains(detail, want) {
			t.Errorf("after the trigger, the page misses %s", want)
		}
	}
	_, list = page(t, ts, "/schedules", rita)
	if !strings.Contains(list, `<a href="/jobs/`+j.Name+`">`) {
		t.Errorf("the list does not link the last job %s", j.Name)
	}
	if code, b := apiPost(t, ts, "/api/v1/workspaces/default/schedules/nightly/disable", carl, "", true, "application/json"); code != http.StatusOK {
		t.Fatalf("the button's disable: %d %s", code, b)
	}
	if _, after := page(t, ts, "/schedules/nightly", carl); !strings.Contains(after, `data-schedule-op="enable"`) {
		t.Error("a disabled schedule's page offers no enable button")
	}

	if status, _ := page(t, ts, "/schedules/nope", rita); status != http.StatusNotFound {
		t.Errorf("a schedule not there: %d", status)
	}
	nora := userWithRole(t, svc, admin, "nora", "Reader")
	if err := svc.UnassignRole(admin, "user:nora", "Reader", "default"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/schedules", "/schedules/nightly"} {
		if status, body := page(t, ts, p, nora); status != http.StatusForbidden || strings.Contains(body, "nightly-") {
			t.Errorf("%s for a user without a role: %d", p, status)
		}
	}
}

package studio_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// page GETs a studio page with a session and returns its status and body.
func page(t *testing.T, ts *httptest.Server, path, session string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: websession.SessionCookie, Value: session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// as is a context signed in with token.
func as(t *testing.T, svc *service.Services, token string) context.Context {
	t.Helper()
	p, err := svc.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return identity.WithPrincipal(context.Background(), p)
}

// userWithRole makes a user with a role in the default workspace and
// returns their API token.
func userWithRole(t *testing.T, svc *service.Services, admin context.Context, name, role string) string {
	t.Helper()
	if _, err := svc.CreateUser(admin, &identity.User{Name: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AssignRole(admin, "user:"+name, role, core.DefaultWorkspace); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.CreateToken(admin, name, "studio", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The schedules editor holds every field of every stored schedule: lists
// of hours and minutes, the interval, any frequency, week and month days,
// start and end, and a time zone the built-in list lacks (an IANA name)
// stays selected rather than showing as UTC. Each row carries the stored
// schedule for the script to send back untouched.
func TestScheduleEditorKeepsEveryField(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	spec := &compute.ComputeSpec{Name: "sched-ci", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", Schedules: &compute.ComputeSchedules{
		ComputeStartStop: []*compute.ComputeStartStopSchedule{
			{Action: "start", Trigger: &compute.ScheduleTrigger{Type: "recurrence", Frequency: "Week", Interval: 2, TimeZone: "Europe/Berlin",
				Schedule: &compute.RecurrencePattern{Hours: compute.IntList{8, 18}, Minutes: compute.IntList{0, 30}, WeekDays: compute.StringList{"Monday", "Friday"}}}},
			{Action: "stop", State: "disabled", Trigger: &compute.ScheduleTrigger{Type: "cron", Expression: "0 19 * * 1-5", StartTime: "2030-01-02T03:04:05"}},
			{Action: "start", Trigger: &compute.ScheduleTrigger{Type: "recurrence", Frequency: "month", TimeZone: "Tokyo Standard Time",
				Schedule: &compute.RecurrencePattern{Hours: compute.IntList{7}, MonthDays: compute.IntList{1, 15}}}},
		}}}
	if _, _, err := svc.CreateOrApplyCompute(admin, core.DefaultWorkspace, spec, ""); err != nil {
		t.Fatal(err)
	}
	code, body := page(t, ts, "/computes/sched-ci", token)
	if code != http.StatusOK {
		t.Fatalf("instance page: %d\n%s", code, body)
	}
	for what, re := range map[string]string{
		"row 0's hours":                `id="s0-hours"[^>]*value="8,18"`,
		"row 0's minutes":              `id="s0-minutes"[^>]*value="0,30"`,
		"row 0's interval":             `id="s0-interval"[^>]*value="2"`,
		"row 0's frequency":            `id="s0-freq"[^>]*>(<option[^>]*>[^<]*</option>)*<option value="Week" selected>`,
		"row 0's IANA zone, selected":  `id="s0-tz"[^>]*><option value="Europe/Berlin" selected>`,
		"row 0's Friday":               `<tr class="schedule" data-row="0"(?s:.)*?value="Friday" checked`,
		"row 0's original":             `data-row="0" data-original="{&#34;action&#34;:&#34;start&#34;`,
		"row 1 disabled":               `id="s1-enabled" name="enabled" aria-label="Enabled 2">`,
		"row 1's cron":                 `id="s1-expr"[^>]*value="0 19 \* \* 1-5"`,
		"row 1's start time":           `id="s1-start"[^>]*value="2030-01-02T03:04:05"`,
		"row 1 without a zone":         `id="s1-tz"[^>]*><option value="" selected>UTC \(not set\)</option>`,
		"row 2's monthly frequency":    `id="s2-freq"[^>]*>(<option[^>]*>[^<]*</option>)*<option value="month" selected>Month</option>`,
		"row 2's month days":           `id="s2-mdays"[^>]*value="1,15"`,
		"row 2's listed zone selected": `id="s2-tz"[^>]*>(<option[^>]*>[^<]*</option>)*<option value="Tokyo Standard Time" selected>`,
		"row 3 empty, UTC":             `id="s3-tz"[^>]*><option value="UTC" selected>`,
		"row 3 without an original":    `data-row="3">`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("%s: no match for %s", what, re)
		}
	}
	if n := strings.Count(body, `value="Minute"`); n != compute.MaxInstanceSchedules {
		t.Errorf("every frequency offered on each row: Minute %d times", n)
	}
}

// The instance page offers what the API allows: a Contributor who is not
// the instance's user gets start, stop and restart (the API lets them) but
// not its SSH string or application links (the API refuses them); a
// Reader gets no buttons; the user gets, while it is off, single sign-on
// (and postponing an idle shutdown, when one is coming).
func TestInstancePagePermissions(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	cody := userWithRole(t, svc, admin, "cody", "Contributor")
	rita := userWithRole(t, svc, admin, "rita", "Reader")
	alice := userWithRole(t, svc, admin, "alice", "Contributor")
	spec := &compute.ComputeSpec{Name: "alice-ci", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", EnableSSO: ptr(false),
		CustomApplications: []*compute.CustomApplication{{Name: "files", Command: "true", Endpoints: []*compute.AppEndpoint{{Target: 8080, Published: 8080}}}}}
	if _, _, err := svc.CreateOrApplyCompute(as(t, svc, alice), core.DefaultWorkspace, spec, ""); err != nil {
		t.Fatal(err)
	}
	has := func(body, s string) bool { return strings.Contains(body, s) }
	_, body := page(t, ts, "/computes/alice-ci", cody)
	for _, b := range []string{`id="start"`, `id="stop"`, `id="restart"`, `id="not-owner"`} {
		if !has(body, b) {
			t.Errorf("a Contributor misses %s", b)
		}
	}
	for _, b := range []string{`data-app="`, `id="ssh"`, `id="postpone"`, `id="enable-sso"`} {
		if has(body, b) {
			t.Errorf("a Contributor who is not the instance's user sees %s", b)
		}
	}
	_, body = page(t, ts, "/computes/alice-ci", rita)
	for _, b := range []string{`id="start"`, `id="stop"`, `id="restart"`, `id="save-schedules"`, `id="idle-form"`, `id="delete"`} {
		if has(body, b) {
			t.Errorf("a Reader sees %s", b)
		}
	}
	if !has(body, `id="not-owner"`) || !has(body, "your role does not allow") {
		t.Error("a Reader is not told why there are no buttons")
	}
	_, body = page(t, ts, "/computes/alice-ci", alice)
	for _, b := range []string{`id="stop"`, `id="enable-sso"`, `id="save-schedules"`} {
		if !has(body, b) {
			t.Errorf("the instance's user misses %s", b)
		}
	}
	if has(body, `id="not-owner"`) {
		t.Error("the instance's user is told it is someone else's")
	}
}

// The job page takes ?rank=N: that rank is selected, its log's tail is in
// the page (it reads without JavaScript), the plain-log link names it;
// a rank the job does not have is refused; a queued job offers no outputs.
func TestJobPageRank(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	if _, _, err := svc.CreateOrApplyCompute(admin, core.DefaultWorkspace, &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: ptr(2)}, ""); err != nil {
		t.Fatal(err)
	}
	j, _, err := svc.SubmitJob(admin, core.DefaultWorkspace, &job.JobSpec{Name: "two-ranks", Command: "echo hi", Compute: "cpu", Resources: &job.JobResources{InstanceCount: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.JobQueued {
		t.Fatalf("the job is %s, want it queued", j.Status)
	}
	code, body := page(t, ts, "/jobs/two-ranks?rank=1", token)
	if code != http.StatusOK {
		t.Fatalf("job page: %d\n%s", code, body)
	}
	for what, s := range map[string]string{
		"rank 1 selected":         `<option value="1" selected>1</option>`,
		"the plain log of rank 1": `/jobs/two-ranks/logs?rank=1"`,
		"the stream's rank":       `data-rank="1"`,
		"a placeholder":           `(waiting for output)`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("%s: %s not in the page", what, s)
		}
	}
	if strings.Contains(body, `id="outputs"`) {
		t.Error("a queued job offers outputs")
	}
	if code, _ := page(t, ts, "/jobs/two-ranks?rank=2", token); code != http.StatusBadRequest {
		t.Errorf("rank 2 of a 2-rank job: %d, want 400", code)
	}
	if code, _ := page(t, ts, "/jobs/two-ranks?rank=x", token); code != http.StatusBadRequest {
		t.Errorf("rank x: %d, want 400", code)
	}
}

func ptr[T any](v T) *T { return &v }

// The job page shows what the job logged through MLflow: a row per
// metric (last, step, min, max, points), a chart per metric, the
// parameters and tags; a job that logged nothing has no such section.
func TestJobPageMetrics(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	if _, _, err := svc.CreateOrApplyCompute(admin, core.DefaultWorkspace, &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: ptr(2)}, ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"logged", "silent"} {
		if _, _, err := svc.SubmitJob(admin, core.DefaultWorkspace, &job.JobSpec{Name: name, Command: "echo hi", Compute: "cpu"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Store().Update(context.Background(), func(tx store.Tx) error {
		if err := tx.AppendMetrics(core.DefaultWorkspace, "logged", []mlflowrun.MetricPoint{
			{Key: "loss", Value: 0.9, Step: 0}, {Key: "loss", Value: 0.25, Step: 1}}); err != nil {
			return err
		}
		if err := tx.InsertRunParam(core.DefaultWorkspace, "logged", mlflowrun.RunParam{Key: "lr", Value: "0.01"}); err != nil {
			return err
		}
		return tx.PutRunTag(core.DefaultWorkspace, "logged", mlflowrun.RunTag{Key: "stage", Value: "train"})
	}); err != nil {
		t.Fatal(err)
	}
	code, body := page(t, ts, "/jobs/logged", token)
	if code != http.StatusOK {
		t.Fatalf("job page: %d\n%s", code, body)
	}
	for what, want := range map[string]string{
		"the metric's row": "<tr><td>loss</td><td>0.25</td><td>1</td><td>0.25</td><td>0.9</td><td>2</td></tr>",
		"its chart":        `<svg class="chart metric"`,
		"the chart's desc": "2 points from step 0 to 1",
		"the parameter":    "<dt>lr</dt><dd>0.01</dd>",
		"the tag":          "<dt>stage</dt><dd>train</dd>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the job page has no %s (%q)", what, want)
		}
	}
	if _, body := page(t, ts, "/jobs/silent", token); strings.Contains(body, `id="h-metrics"`) {
		t.Errorf("a job that logged nothing has a metrics section")
	}
}

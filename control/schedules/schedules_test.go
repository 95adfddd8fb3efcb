package schedules

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/schedules"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// harness is a store on a test clock with a cluster "cpu", the services
// over it, bob (a Contributor of ws) and a context acting as bob.
type harness struct {
	t     *testing.T
	db    store.Store
	clock *storetest.Clock
	svc   *service.Services
	bob   context.Context
}

func newHarness(t *testing.T) *harness {
	db, clock := teststore.Open(t)
	return setUp(t, db, clock)
}

// setUp makes the harness over db: the cluster, bob and his role.
func setUp(t *testing.T, db store.Store, clock *storetest.Clock) *harness {
	if err := db.Update(t.Context(), func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		two := 2
		c.MaxInstances = &two
		return tx.InsertCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, db: db, clock: clock}
	h.svc = services(t, db)
	admin := identity.WithPrincipal(t.Context(), &identity.Principal{ID: identity.AdminPrincipalID, Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if _, err := h.svc.CreateUser(admin, &identity.User{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.AssignRole(admin, "user:bob", identity.RoleContributor, "ws"); err != nil {
		t.Fatal(err)
	}
	h.bob = identity.WithPrincipal(t.Context(), &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser})
	return h
}

// services are a server's request services over db.
func services(t *testing.T, db store.Store) *service.Services {
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	return service.New(service.Config{Store: db, Catalog: cat, Files: teststore.Files(t)})
}

const jobDoc = `{"type": "command", "command": "echo ${{name}} at ${{creation_context.trigger_time}}", "compute": "azureml:cpu", "environment": {"image": "python:3.12"}}`

// create creates a schedule from its YAML (as JSON) as bob.
func (h *harness) create(doc string) *dschedule.JobSchedule {
	h.t.Helper()
	sc, err := dschedule.Decode([]byte(doc))
	if err != nil {
		h.t.Fatal(err)
	}
	out, _, err := schedules.Over(h.svc).CreateOrUpdate(h.bob, "ws", sc)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// pass runs the loop at the clock's now, over a new loop each time (as
// a restarted server's).
func (h *harness) pass() {
	h.t.Helper()
	if err := New(h.svc).RunOnce(h.t.Context(), h.clock.Now()); err != nil {
		h.t.Fatal(err)
	}
}

// scheduled lists the jobs the schedules submitted, by name.
func (h *harness) scheduled() []*job.Job {
	h.t.Helper()
	all, err := h.svc.ListJobs(h.t.Context(), job.JobFilter{Workspace: "ws"})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*job.Job
	for _, j := range all {
		if j.Tags[dschedule.TagSchedule] != "" {
			out = append(out, j)
		}
	}
	return out
}

func (h *harness) get(name string) *dschedule.JobSchedule {
	h.t.Helper()
	sc, err := schedules.Over(h.svc).Get(h.t.Context(), "ws", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return sc
}

// A cron schedule in a time zone fires on its minute, once, with the
// expressions replaced and the tags set, as its last writer; a new
// loop over the same store (a restarted server) does not fire it again;
// the next fire time is shown.
func TestFiresOnTimeOnceAcrossARestart(t *testing.T) {
	h := newHarness(t)
	// 2025-03-14 14:09 UTC is 15:09 CET: the next 16:00 Paris is 15:00 UTC.
	h.create(`{"name": "Hourly", "trigger": {"type": "cron", "expression": "0 16 * * *", "time_zone": "W. Europe Standard Time"},
		"create_job": {"job": ` + jobDoc + `, "display_name": "nightly", "tags": {"team": "a"}}}`)
	if n := h.get("hourly").Status.NextFireTime; n == nil || !n.Equal(time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)) {
		t.Fatalf("NextFireTime = %v, want 15:00 UTC", n)
	}
	h.clock.Set(time.Date(2025, 3, 14, 14, 59, 59, 0, time.UTC))
	h.pass()
	if got := h.scheduled(); len(got) != 0 {
		t.Fatalf("fired early: %v", got)
	}
	h.clock.Set(time.Date(2025, 3, 14, 15, 0, 3, 0, time.UTC))
	h.pass()
	h.pass()
	got := h.scheduled()
	if len(got) != 1 {
		t.Fatalf("%d jobs, want 1", len(got))
	}
	j := got[0]
	if j.Name != "hourly-20250314t1500" || j.Tags["team"] != "a" || j.DisplayName != "nightly" || j.Tags[dschedule.TagTriggerTime] != "2025-03-14T15:00:00Z" ||
		j.Tags[dschedule.TagLate] != "" || j.CreatedBy != "bob" {
		t.Errorf("job = %s %q tags %v by %s", j.Name, j.DisplayName, j.Tags, j.CreatedBy)
	}
	if want := "echo hourly-20250314t1500 at 2025-03-14T15:00:00Z"; j.Command != want {
		t.Errorf("command = %q, want %q", j.Command, want)
	}
	sc := h.get("Hourly")
	if sc.Status.Fires != 1 || sc.Status.LastJob != j.Name || !strings.Contains(sc.Status.LastMessage, "submitted job "+j.Name) {
		t.Errorf("status = %+v", sc.Status)
	}
	// Lost the record (a crash between the submission and it): the next
	// server submits nothing new and records the firing.
	if err := h.db.Update(t.Context(), func(tx store.Tx) error {
		cur, err := tx.GetJobSchedule("ws", "hourly")
		if err != nil {
			return err
		}
		cur.Status = dschedule.ScheduleStatus{}
		return tx.PutJobSchedule(cur)
	}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if got := h.scheduled(); len(got) != 1 {
		t.Fatalf("%d jobs after the restart, want 1", len(got))
	}
	if sc := h.get("hourly"); sc.Status.LastFireTime == nil || !strings.Contains(sc.Status.LastMessage, "already submitted") {
		t.Errorf("status after the restart = %+v", sc.Status)
	}
	var events []*core.Event
	if err := h.db.View(t.Context(), func(tx store.Tx) (err error) {
		events, err = tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: core.ResourceSchedule})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Kind != core.EventScheduleFired {
		t.Errorf("events = %+v", events)
	}
}

// A recurrence fires on its pattern; firings missed for days while no
// server ran start ONE job, the latest, which says it was late.
func TestMissedFiringsStartOnceAndSaySo(t *testing.T) {
	h := newHarness(t)
	h.create(`{"name": "daily", "trigger": {"type": "recurrence", "frequency": "day", "interval": 1, "schedule": {"hours": [2], "minutes": [30]}},
		"create_job": ` + jobDoc + `}`)
	h.clock.Set(time.Date(2025, 3, 18, 9, 0, 0, 0, time.UTC))
	h.pass()
	got := h.scheduled()
	if len(got) != 1 || got[0].Name != "daily-20250318t0230" {
		t.Fatalf("jobs = %v, want daily-20250318t0230 only", got)
	}
	if late := got[0].Tags[dschedule.TagLate]; late != "missed at 2025-03-18 02:30 UTC, started at 2025-03-18 09:00 UTC" {
		t.Errorf("late tag = %q", late)
	}
	if m := h.get("daily").Status.LastMessage; !strings.Contains(m, "fired late") {
		t.Errorf("LastMessage = %q", m)
	}
	h.clock.Set(time.Date(2025, 3, 19, 2, 30, 10, 0, time.UTC))
	h.pass()
	if got := h.scheduled(); len(got) != 2 {
		t.Fatalf("%d jobs, want 2", len(got))
	}
}

// A disabled schedule does not fire, and enabling it again does not catch
// up what it missed; trigger fires it at once as the caller.
func TestDisabledDoesNotFire(t *testing.T) {
	h := newHarness(t)
	h.create(`{"name": "m", "trigger": {"type": "cron", "expression": "*/5 * * * *"}, "create_job": ` + jobDoc + `}`)
	if _, err := schedules.Over(h.svc).SetEnabled(h.bob, "ws", "m", false); err != nil {
		t.Fatal(err)
	}
	if sc := h.get("m"); sc.IsEnabled || sc.Status.NextFireTime != nil {
		t.Errorf("disabled: %+v", sc)
	}
	h.clock.Advance(time.Hour)
	h.pass()
	if got := h.scheduled(); len(got) != 0 {
		t.Fatalf("a disabled schedule fired: %v", got)
	}
	if _, err := schedules.Over(h.svc).SetEnabled(h.bob, "ws", "m", true); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if got := h.scheduled(); len(got) != 0 {
		t.Fatalf("enabling caught up missed firings: %v", got)
	}
	j, err := schedules.Over(h.svc).Trigger(h.bob, "ws", "m")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.scheduled(); len(got) != 1 || got[0].Name != j.Name {
		t.Fatalf("trigger: %v", got)
	}
	h.clock.Advance(5 * time.Minute)
	h.pass()
	if got := h.scheduled(); len(got) != 2 {
		t.Fatalf("%d jobs after the next firing, want 2", len(got))
	}
}

// A schedule whose last writer left the workspace is skipped, and says
// why; nothing is submitted.
func TestCreatorRemovedIsSkipped(t *testing.T) {
	h := newHarness(t)
	h.create(`{"name": "n", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`)
	admin := identity.WithPrincipal(t.Context(), &identity.Principal{ID: identity.AdminPrincipalID, Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if err := h.svc.UnassignRole(admin, "user:bob", identity.RoleContributor, "ws"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	h.pass()
	if got := h.scheduled(); len(got) != 0 {
		t.Fatalf("fired as a user without rights: %v", got)
	}
	sc := h.get("n")
	if sc.Status.LastFireTime == nil || sc.Status.Fires != 0 || !strings.Contains(sc.Status.LastMessage, "bob may no longer submit jobs") {
		t.Errorf("status = %+v", sc.Status)
	}
}

// Bad input is refused at create, each naming its field.
func TestBadInputRefusedAtCreate(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ name, doc, field, words string }{
		{"six fields", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 2 * * *"}, "create_job": ` + jobDoc + `}`, "trigger.expression", "five"},
		{"february 31", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 31 2 *"}, "create_job": ` + jobDoc + `}`, "trigger.expression", "never fires"},
		{"bad zone", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 * * *", "time_zone": "Mars/Olympus"}, "create_job": ` + jobDoc + `}`, "trigger.time_zone", "Mars/Olympus"},
		{"end before start", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 * * *", "start_time": "2026-01-02T00:00:00", "end_time": "2026-01-01T00:00:00"}, "create_job": ` + jobDoc + `}`, "trigger.end_time", "after start_time"},
		{"invalid job", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 * * *"}, "create_job": {"job": {"type": "command", "compute": "azureml:cpu"}}}`, "create_job.job.command", ""},
		{"job on a compute not there", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 * * *"}, "create_job": {"job": ` + jobDoc + `, "compute": "azureml:gpu"}}`, "create_job.job.compute", "gpu"},
		{"azureml job not there", `{"name": "a", "trigger": {"type": "cron", "expression": "0 0 * * *"}, "create_job": "azureml:nope"}`, "create_job", "nope"},
	} {
		sc, err := dschedule.Decode([]byte(c.doc))
		if err == nil {
			_, _, err = schedules.Over(h.svc).CreateOrUpdate(h.bob, "ws", sc)
		}
		if core.ErrorCode(err) != core.EINVALID && core.ErrorCode(err) != core.ENOTFOUND || core.ErrorField(err) != c.field || !strings.Contains(core.ErrorMessage(err), c.words) {
			t.Errorf("%s: %v (field %q), want field %s saying %q", c.name, err, core.ErrorField(err), c.field, c.words)
		}
	}
	list, err := schedules.Over(h.svc).List(t.Context(), "ws")
	if err != nil || len(list) != 0 {
		t.Errorf("refused schedules stored: %v %v", list, err)
	}
}

// create_job: azureml:<job> with overrides submits the existing job's
// definition with the overrides merged.
func TestExistingJobWithOverrides(t *testing.T) {
	h := newHarness(t)
	if _, _, err := h.svc.SubmitJobDocument(h.bob, "ws", "", []byte(`{"name": "base", "type": "command", "command": "echo base", "compute": "azureml:cpu", "environment": {"image": "python:3.12"}, "environment_variables": {"A": "1"}}`)); err != nil {
		t.Fatal(err)
	}
	h.create(`{"name": "again", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": {"type": "command", "job": "azureml:base", "environment_variables": {"B": "2"}}}`)
	j, err := schedules.Over(h.svc).Trigger(h.bob, "ws", "again")
	if err != nil {
		t.Fatal(err)
	}
	if j.Command != "echo base" || j.EnvironmentVariables["A"] != "1" || j.EnvironmentVariables["B"] != "2" {
		t.Errorf("job = %q %v", j.Command, j.EnvironmentVariables)
	}
}

// A workspace holds at most MaxJobSchedules schedules: one more is
// refused, a replacement of one there is not.
func TestScheduleLimit(t *testing.T) {
	h := newHarness(t)
	first := h.create(`{"name": "s0", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`)
	if err := h.db.Update(t.Context(), func(tx store.Tx) error {
		for i := 1; i < dschedule.MaxJobSchedules; i++ {
			c := *first
			c.Name = "s" + strconv.Itoa(i)
			if err := tx.PutJobSchedule(&c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sc, _ := dschedule.Decode([]byte(`{"name": "one-more", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`))
	if _, _, err := schedules.Over(h.svc).CreateOrUpdate(h.bob, "ws", sc); core.ErrorCode(err) != core.EQUOTA {
		t.Errorf("schedule %d: %v, want EQUOTA", dschedule.MaxJobSchedules+1, err)
	}
	h.create(`{"name": "s7", "description": "replaced", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": ` + jobDoc + `}`)
}

// A job document naming its job (or an override naming one) cannot make
// a firing submit under, or collide with, a name of its choosing: each
// firing names its own job.
func TestJobNameInDocumentIgnored(t *testing.T) {
	h := newHarness(t)
	doc := strings.Replace(jobDoc, `"type": "command",`, `"type": "command", "name": "victim",`, 1)
	h.create(`{"name": "n", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": {"job": ` + doc + `, "name": "victim2"}}`)
	j, err := schedules.Over(h.svc).Trigger(h.bob, "ws", "n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.Name, "n-") {
		t.Errorf("job named %q, want the firing's name", j.Name)
	}
}

// pipelineDoc is a two-step pipeline: a's output read by b, a literal
// pipeline input bound into a.
const pipelineDoc = `{"name": "nightly-base", "type": "pipeline", "compute": "azureml:cpu",
 "inputs": {"n": 1},
 "settings": {"continue_on_step_failure": false},
 "jobs": {
  "a": {"command": "echo ${{inputs.n}} > ${{outputs.o}}/x", "environment": {"image": "python:3.12"},
        "inputs": {"n": "${{parent.inputs.n}}"}, "outputs": {"o": {"type": "uri_folder"}}},
  "b": {"command": "cat ${{inputs.i}}/x", "environment": {"image": "python:3.12"},
        "inputs": {"i": "${{parent.jobs.a.outputs.o}}"}}}}`

// create_job: azureml:<a pipeline job> with overrides (a pipeline input,
// the tags) is accepted, and a trigger submits a new pipeline whose
// steps are the source's, the override applied; the pipeline loop then
// starts its first step. The stored pipeline was once written back with
// its decoded steps (component_ref, bindings as mappings), which the
// decoder refused: the schedule answered 400.
func TestExistingPipelineJob(t *testing.T) {
	h := newHarness(t)
	if _, _, err := h.svc.SubmitJobDocument(h.bob, "ws", "", []byte(pipelineDoc)); err != nil {
		t.Fatal(err)
	}
	sc := h.create(`{"name": "again", "trigger": {"type": "cron", "expression": "0 * * * *"},
	  "create_job": {"type": "pipeline", "job": "azureml:nightly-base", "inputs": {"n": 7}, "tags": {"k": "v"}}}`)
	if sc.CreateJob.Type != job.JobTypePipeline {
		t.Errorf("create_job type = %q", sc.CreateJob.Type)
	}
	j, err := schedules.Over(h.svc).Trigger(h.bob, "ws", "again")
	if err != nil {
		t.Fatal(err)
	}
	if j.Pipeline == nil || len(j.Pipeline.Jobs) != 2 || j.Pipeline.Jobs["b"].Inputs["i"].Bind != "${{parent.jobs.a.outputs.o}}" {
		t.Fatalf("fired job is not the source's pipeline: %+v", j.Pipeline)
	}
	if v := job.FormatInputValue(j.Pipeline.Inputs["n"].Value); v != "7" || j.Tags["k"] != "v" || j.Tags[dschedule.TagSchedule] != "again" {
		t.Errorf("override not applied: n=%s tags=%v", v, j.Tags)
	}
	if err := pipelines.New(h.svc).RunOnce(h.t.Context(), h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	all, err := h.svc.ListJobs(t.Context(), job.JobFilter{Workspace: "ws"})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, c := range all {
		if c.ParentJobName == j.Name {
			steps = append(steps, c.Name)
		}
	}
	if len(steps) != 1 {
		t.Errorf("the fired pipeline's started steps = %v, want its first step alone", steps)
	}
}

// Attack: a job fired from azureml:<job> writes its outputs under its
// own name, never into the source job's outputs (which a firing would
// overwrite, every firing the same folder).
func TestExistingJobOutputsAreTheFiredJobs(t *testing.T) {
	h := newHarness(t)
	if _, _, err := h.svc.SubmitJobDocument(h.bob, "ws", "", []byte(`{"name": "base", "type": "command", "command": "echo > ${{outputs.o}}/x; echo > ${{outputs.p}}/y", "compute": "azureml:cpu", "environment": {"image": "python:3.12"},
	  "outputs": {"o": {"type": "uri_folder"}, "p": {"type": "uri_folder", "path": "azureml://datastores/workspaceblobstore/paths/runs/${{name}}/p"}}}`)); err != nil {
		t.Fatal(err)
	}
	h.create(`{"name": "again", "trigger": {"type": "cron", "expression": "0 * * * *"}, "create_job": "azureml:base"}`)
	j, err := schedules.Over(h.svc).Trigger(h.bob, "ws", "again")
	if err != nil {
		t.Fatal(err)
	}
	src, err := h.svc.FindJob(t.Context(), "ws", "base")
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"o", "p"} {
		got, was := j.Outputs[out], src.Outputs[out]
		if got == nil || was == nil {
			t.Fatalf("output %s missing: %+v / %+v", out, got, was)
		}
		if strings.Contains(got.Path, "base") || got.Path == was.Path && got.Path != "" {
			t.Errorf("output %s of the fired job %s is the source's: %q (source %q)", out, j.Name, got.Path, was.Path)
		}
	}
}

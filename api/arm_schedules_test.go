package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

// schedGolden reads a schedule body azure-ai-ml 1.4.0 sends
// (arm/testdata/schedules: JobSchedule._to_rest_object().serialize()).
func schedGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../arm/testdata/schedules/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// armPipelineSetup gives the default workspace what the golden pipeline
// (arm/testdata/jobs/pipeline.json) names: compute cpu, environment
// sdk-env:1 and components prep:1 and train:1.
func armPipelineSetup(t *testing.T, e *testEnv, call func(tok, method, path, body string, want int) map[string]any) {
	t.Helper()
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", `{"name":"cpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	call(e.admin, "PUT", "/environments/sdk-env/versions/1", `{"properties":{"image":"python:3.11"}}`, http.StatusCreated)
	call(e.admin, "PUT", "/components/prep/versions/1", `{"properties":{"componentSpec":{"type":"command","command":"mkdir -p ${{outputs.out}}","environment":"azureml:sdk-env:1","outputs":{"out":{"type":"uri_folder"}}}}}`, http.StatusCreated)
	call(e.admin, "PUT", "/components/train/versions/1", `{"properties":{"componentSpec":{"type":"command","command":"ls ${{inputs.data}}; echo ${{inputs.k}}","environment":"azureml:sdk-env:1","inputs":{"data":{"type":"uri_folder"},"k":{"type":"integer"}}}}}`, http.StatusCreated)
}

// TestARMSchedules: Azure's schedule routes take the bodies azure-ai-ml
// sends (a @dsl.pipeline under a CronTrigger; an existing job by
// sourceJobId under a RecurrenceTrigger), answer Azure's Schedule
// (provisioningState Succeeded, the trigger, the jobDefinition as a job
// is written), take back what they answered with isEnabled changed (the
// SDK's begin_disable and begin_enable), list by listViewType in pages
// and delete; a Reader cannot write; refusals name Azure's property.
func TestARMSchedules(t *testing.T) {
	e := newTestEnv(t)
	const q = "?api-version=2022-10-01"
	call := armCaller(t, e, q)
	armPipelineSetup(t, e, call)
	reader := addUser(t, e, "rita", identity.RoleReader)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	body := schedGolden(t, "pipeline_cron.json")

	if r := send(t, e, reader, "PUT", armWS+"/schedules/nightly"+q, body, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's PUT: %s, want 403", r)
	}
	// schedules/write without jobs/write (a custom role) never gets a job
	// run as them, on ARM as on the native route.
	mustSend(t, e, e.admin, "POST", "/api/v1/roles", `{"name":"schedulers","actions":["schedules/read","schedules/write"]}`, http.StatusCreated)
	if r := send(t, e, addUser(t, e, "sam", "schedulers"), "PUT", armWS+"/schedules/nightly"+q, body, nil); r.status != http.StatusForbidden {
		t.Errorf("a PUT without jobs/write: %s, want 403", r)
	}
	got := call(carl, "PUT", "/schedules/nightly", body, http.StatusCreated)
	p := props(got)
	tr, _ := p["trigger"].(map[string]any)
	action, _ := p["action"].(map[string]any)
	def, _ := action["jobDefinition"].(map[string]any)
	jobs, _ := def["jobs"].(map[string]any)
	if got["id"] != armWS+"/schedules/nightly" || got["type"] != "Microsoft.MachineLearningServices/workspaces/schedules" ||
		p["provisioningState"] != "Succeeded" || p["isEnabled"] != true || fmt.Sprint(p["tags"]) != "map[team:a]" ||
		tr["triggerType"] != "Cron" || tr["expression"] != "0 2 * * *" || tr["timeZone"] != "Pacific Standard Time" || tr["startTime"] != "2026-01-01T00:00:00" ||
		action["actionType"] != "CreateJob" || def["jobType"] != "Pipeline" || len(jobs) != 2 || def["status"] != nil {
		t.Fatalf("created: %s", mustJSON(got))
	}
	// The operation the answer names (azure-ai-ml polls it, then GETs the
	// schedule).
	r := send(t, e, carl, "PUT", armWS+"/schedules/nightly"+q, body, nil)
	op, err := url.Parse(r.header.Get("Azure-AsyncOperation"))
	if r.status != http.StatusOK || err != nil || op.Path != armWS+"/schedules/nightly/operations/create" {
		t.Fatalf("PUT again: %s, Azure-AsyncOperation %q", r, r.header.Get("Azure-AsyncOperation"))
	}
	if st := mustSend(t, e, reader, "GET", op.RequestURI(), "", http.StatusOK).json(t); st["status"] != "Succeeded" {
		t.Errorf("the operation: %v", st)
	}
	if r := send(t, e, reader, "GET", armWS+"/schedules/nope/operations/create"+q, "", nil); r.status != http.StatusNotFound {
		t.Errorf("the operation of a schedule not there: %s", r)
	}
	// The SDK's begin_disable: what it read, isEnabled false, PUT back.
	read := call(reader, "GET", "/schedules/nightly", "", http.StatusOK)
	props(read)["isEnabled"] = false
	back, _ := json.Marshal(read)
	if p := props(call(carl, "PUT", "/schedules/nightly", string(back), http.StatusOK)); p["isEnabled"] != false {
		t.Errorf("disabled: %v", p)
	}
	native := mustSend(t, e, reader, "GET", "/api/v1/workspaces/default/schedules/nightly", "", http.StatusOK).json(t)
	if native["is_enabled"] != false || native["updated_by"] != "carl" {
		t.Errorf("native show after the ARM disable: %v", native)
	}
	list := func(view string) []any {
		t.Helper()
		v, _ := mustSend(t, e, reader, "GET", armWS+"/schedules"+q+view, "", http.StatusOK).json(t)["value"].([]any)
		return v
	}
	if n := len(list("")); n != 0 {
		t.Errorf("EnabledOnly (the SDK's default) lists %d, want 0", n)
	}
	if n := len(list("&listViewType=DisabledOnly")); n != 1 {
		t.Errorf("DisabledOnly lists %d, want 1", n)
	}
	if r := send(t, e, reader, "GET", armWS+"/schedules"+q+"&listViewType=ArchivedOnly", "", nil); r.status != 400 || errTarget(t, r) != "listViewType" {
		t.Errorf("listViewType ArchivedOnly: %s", r)
	}
	props(read)["isEnabled"] = true
	back, _ = json.Marshal(read)
	if p := props(call(carl, "PUT", "/schedules/nightly", string(back), http.StatusOK)); p["isEnabled"] != true {
		t.Errorf("enabled again: %v", p)
	}

	// An existing job by sourceJobId, on a weekly recurrence (a
	// pipeline job named so: TestARMScheduleSourcePipeline).
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/jobs/cmd-one", strings.Replace(scheduleJob, "${{name}}", "weekly", 1), http.StatusCreated)
	weekly := strings.Replace(schedGolden(t, "recurrence_source_job.json"), "/jobs/pipe-one", "/jobs/cmd-one", 1)
	got = call(carl, "PUT", "/schedules/weekly", weekly, http.StatusCreated)
	p = props(got)
	tr, _ = p["trigger"].(map[string]any)
	def, _ = p["action"].(map[string]any)["jobDefinition"].(map[string]any)
	if tr["triggerType"] != "Recurrence" || tr["frequency"] != "Week" || tr["interval"] != float64(1) ||
		mustJSON(tr["schedule"]) != `{"hours":[10],"minutes":[0],"weekDays":["monday","friday"]}` ||
		def["sourceJobId"] != armWS+"/jobs/cmd-one" || def["jobType"] != "Command" || !strings.HasPrefix(fmt.Sprint(def["command"]), "echo ") {
		t.Errorf("weekly: %s", mustJSON(got))
	}
	if n := len(list("&listViewType=All")); n != 2 {
		t.Errorf("All lists %d, want 2", n)
	}

	// Refusals name Azure's property and store nothing.
	for _, c := range []struct{ name, from, to, target string }{
		{"six fields", `"expression": "0 2 * * *"`, `"expression": "0 0 2 * * *"`, "properties.trigger.expression"},
		{"a zone that is not", `"timeZone": "Pacific Standard Time"`, `"timeZone": "Mars/Olympus"`, "properties.trigger.timeZone"},
		{"an unknown trigger property", `"triggerType": "Cron"`, `"triggerType": "Cron", "week": 1`, "properties.trigger.week"},
		{"an action Shoal does not take", `"actionType": "CreateJob"`, `"actionType": "CreateMonitor"`, "properties.action.actionType"},
		{"a job type Shoal does not run", `"jobType": "Pipeline"`, `"jobType": "Spark"`, "properties.action.jobDefinition.jobType"},
	} {
		bad := strings.Replace(body, c.from, c.to, 1)
		if bad == body {
			t.Fatalf("%s: %q not in the golden body", c.name, c.from)
		}
		if r := send(t, e, carl, "PUT", armWS+"/schedules/bad"+q, bad, nil); r.status != 400 || errTarget(t, r) != c.target {
			t.Errorf("%s: %s, want 400 naming %s", c.name, r, c.target)
		}
	}
	missing := strings.Replace(schedGolden(t, "recurrence_source_job.json"), "/jobs/pipe-one", "/jobs/no-such-job", 1)
	if r := send(t, e, carl, "PUT", armWS+"/schedules/bad"+q, missing, nil); r.status/100 != 4 || errTarget(t, r) != "properties.action.jobDefinition" {
		t.Errorf("a source job that is not there: %s", r)
	}
	// Attack: another workspace's job by its ARM id is not this
	// workspace's job of the same name.
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"other"}`, http.StatusCreated)
	otherWS := strings.Replace(schedGolden(t, "recurrence_source_job.json"), "/workspaces/default/jobs/pipe-one", "/workspaces/other/jobs/cmd-one", 1)
	if r := send(t, e, carl, "PUT", armWS+"/schedules/bad"+q, otherWS, nil); r.status != 400 || errTarget(t, r) != "properties.action.jobDefinition.sourceJobId" {
		t.Errorf("another workspace's job: %s", r)
	}
	call(reader, "GET", "/schedules/nightly", "", http.StatusOK)
	if r := send(t, e, reader, "GET", armWS+"/schedules/bad"+q, "", nil); r.status != http.StatusNotFound {
		t.Errorf("a refused schedule was stored: %s", r)
	}

	call(carl, "DELETE", "/schedules/weekly", "", http.StatusOK)
	call(carl, "DELETE", "/schedules/weekly", "", http.StatusNoContent)
	if r := send(t, e, reader, "DELETE", armWS+"/schedules/nightly"+q, "", nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's DELETE: %s, want 403", r)
	}
}

// TestARMSchedulesPaging: a list longer than a page has a nextLink that
// carries listViewType, and following it lists every schedule once.
func TestARMSchedulesPaging(t *testing.T) {
	e := newTestEnv(t)
	const q = "?api-version=2022-10-01"
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", `{"name":"cpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	for i := range 27 {
		doc := fmt.Sprintf(`{"name":"s%02d","trigger":{"type":"cron","expression":"0 2 * * *"},"create_job":{"job":%s}}`, i, scheduleJob)
		mustSend(t, e, e.admin, "PUT", fmt.Sprintf("/api/v1/workspaces/default/schedules/s%02d", i), doc, http.StatusCreated)
	}
	seen := map[string]bool{}
	next := armWS + "/schedules" + q + "&listViewType=All"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatalf("more pages than 27 schedules need")
		}
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		path := u.RequestURI()
		out := mustSend(t, e, e.admin, "GET", path, "", http.StatusOK).json(t)
		if pages == 0 && !strings.Contains(fmt.Sprint(out["nextLink"]), "listViewType=All") {
			t.Errorf("nextLink %v does not carry listViewType", out["nextLink"])
		}
		for _, v := range out["value"].([]any) {
			n := v.(map[string]any)["name"].(string)
			if seen[n] {
				t.Errorf("%s listed twice", n)
			}
			seen[n] = true
		}
		next, _ = out["nextLink"].(string)
	}
	if len(seen) != 27 {
		t.Errorf("listed %d schedules, want 27", len(seen))
	}
}

// TestARMScheduleInvokeBatchEndpoint: an InvokeBatchEndpoint action
// (endpointInvocationDefinition) on an endpoint of the workspace is kept
// and answered in the same shape, and fires a scoring job; one naming an
// endpoint that is not there is refused naming Azure's property.
func TestARMScheduleInvokeBatchEndpoint(t *testing.T) {
	e := newTestEnv(t)
	const q = "?api-version=2022-10-01"
	call := armCaller(t, e, q)
	code := batchSetup(t, e)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/batch-endpoints/digits", `{"name":"digits"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/batch-endpoints/digits/deployments/torch", deploymentDoc(code, ""), http.StatusCreated)
	inv := `{"properties":{"trigger":{"triggerType":"Cron","expression":"0 3 * * *"},"action":{"actionType":"InvokeBatchEndpoint",
		"endpointInvocationDefinition":{"endpoint":"digits","input":"azureml://datastores/workspaceblobstore/paths/digits/","experimentName":"nightly-scoring"}}}}`
	got := props(call(e.admin, "PUT", "/schedules/score", inv, http.StatusCreated))
	action, _ := got["action"].(map[string]any)
	if action["actionType"] != "InvokeBatchEndpoint" || mustJSON(action["endpointInvocationDefinition"]) != `{"endpoint":"digits","experimentName":"nightly-scoring","input":"azureml://datastores/workspaceblobstore/paths/digits/"}` {
		t.Errorf("answer: %v", got)
	}
	j := mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/schedules/score/trigger", "", http.StatusCreated).json(t)
	if tags, _ := j["tags"].(map[string]any); tags["azureml.batchEndpoint"] != "digits" {
		t.Errorf("the fired job: %v", j)
	}
	missing := strings.Replace(inv, `"endpoint":"digits"`, `"endpoint":"nope"`, 1)
	if r := send(t, e, e.admin, "PUT", armWS+"/schedules/bad"+q, missing, nil); r.status != 400 || errTarget(t, r) != "properties.action.endpointInvocationDefinition.endpoint" {
		t.Errorf("an endpoint not there: %s", r)
	}
}

// TestScheduleUndecodableJob (attack): a schedule whose job does not
// decode (a key no job has) is answered 400 naming the field, on the
// native route; the check once dereferenced the failed decoding and
// dropped the connection.
func TestScheduleUndecodableJob(t *testing.T) {
	e := newTestEnv(t)
	doc := `{"name":"bad","trigger":{"type":"cron","expression":"0 2 * * *"},"create_job":{"job":{"type":"command","command":"true","compute":"azureml:cpu","bogus":1}}}`
	if r := send(t, e, e.admin, "PUT", "/api/v1/workspaces/default/schedules/bad", doc, nil); r.status != 400 || errTarget(t, r) != "create_job.job.bogus" {
		t.Errorf("a job key no job has: %s", r)
	}
}

// TestARMScheduleSourcePipeline: the SDK's schedule naming an existing
// pipeline job (jobDefinition.sourceJobId, jobType Pipeline) is taken
// and answered with the pipeline's definition; a trigger submits a new
// pipeline whose steps are the source's. It was once refused 400
// (jobs.<step>.component_ref: unknown key): the stored pipeline was
// written back with its decoded steps.
func TestARMScheduleSourcePipeline(t *testing.T) {
	e := newTestEnv(t)
	const q = "?api-version=2022-10-01"
	call := armCaller(t, e, q)
	armPipelineSetup(t, e, call)
	call(e.admin, "PUT", "/jobs/pipe-one", armGolden(t, "pipeline.json"), http.StatusCreated)
	source := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/pipe-one", "", http.StatusOK).json(t)
	got := call(e.admin, "PUT", "/schedules/weekly", schedGolden(t, "recurrence_source_job.json"), http.StatusCreated)
	def, _ := got["properties"].(map[string]any)["action"].(map[string]any)["jobDefinition"].(map[string]any)
	if def["jobType"] != "Pipeline" || def["sourceJobId"] != armWS+"/jobs/pipe-one" {
		t.Errorf("jobDefinition: %s", mustJSON(def))
	}
	j := mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/schedules/weekly/trigger", "", http.StatusCreated).json(t)
	steps := func(m map[string]any) string {
		p, _ := m["pipeline"].(map[string]any)
		jobs, _ := p["jobs"].(map[string]any)
		return mustJSON(jobs)
	}
	if steps(j) != steps(source) || steps(j) == "null" {
		t.Errorf("the fired pipeline's steps differ from the source's:\n got %s\nwant %s", steps(j), steps(source))
	}
}

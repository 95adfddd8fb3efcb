package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
)

const scheduleJob = `{"type":"command","command":"echo ${{name}}","compute":"azureml:cpu","environment":{"image":"python:3.12"}}`

// Schedules over the native API: a Reader lists and shows but cannot
// write; a Contributor creates (201), replaces (200), shows the next
// fire time, triggers a job named as a firing, disables and deletes; a
// document naming another schedule, or an invalid job, is refused naming
// the field; schedules/write without jobs/write (a custom role) cannot
// trigger a job.
func TestSchedulesAPI(t *testing.T) {
	e := newTestEnv(t)
	maxN := 2
	if _, _, err := e.svc.CreateOrApplyCompute(context.Background(), "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	const base = "/api/v1/workspaces/default/schedules"
	reader := addUser(t, e, "rita", identity.RoleReader)
	contributor := addUser(t, e, "carl", identity.RoleContributor)
	mustSend(t, e, e.admin, "POST", "/api/v1/roles", `{"name":"schedulers","actions":["schedules/read","schedules/write"]}`, http.StatusCreated)
	scheduler := addUser(t, e, "sam", "schedulers")
	doc := `{"name":"nightly","trigger":{"type":"cron","expression":"0 2 * * *","time_zone":"UTC"},"create_job":{"job":` + scheduleJob + `}}`

	if r := send(t, e, reader, "PUT", base+"/nightly", doc, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's create: %s, want 403", r)
	}
	mustSend(t, e, contributor, "PUT", base+"/nightly", doc, http.StatusCreated)
	mustSend(t, e, contributor, "PUT", base+"/nightly", doc, http.StatusOK)
	if r := send(t, e, contributor, "PUT", base+"/nightly", strings.Replace(doc, `"name":"nightly"`, `"name":"other"`, 1), nil); r.status != 400 || errTarget(t, r) != "name" {
		t.Errorf("a document naming another schedule: %s", r)
	}
	if r := send(t, e, contributor, "PUT", base+"/nightly", strings.Replace(doc, `"command":"echo ${{name}}",`, "", 1), nil); r.status != 400 || errTarget(t, r) != "create_job.job.command" {
		t.Errorf("an invalid job: %s, want 400 naming create_job.job.command", r)
	}
	if r := send(t, e, contributor, "PUT", base+"/nightly", strings.Replace(doc, `"trigger":{`, `"trigger":{"week":1,`, 1), nil); r.status != 400 || errTarget(t, r) != "trigger.week" {
		t.Errorf("an unknown trigger key: %s", r)
	}
	got := mustSend(t, e, reader, "GET", base+"/nightly", "", http.StatusOK).json(t)
	if st, _ := got["status"].(map[string]any); st == nil || st["next_fire_time"] == nil || got["updated_by"] != "carl" || got["is_enabled"] != true {
		t.Errorf("show = %v", got)
	}
	if list := mustSend(t, e, reader, "GET", base, "", http.StatusOK).json(t)["value"].([]any); len(list) != 1 {
		t.Errorf("list = %v", list)
	}
	// schedules/write without jobs/write gets no job run: not by a
	// trigger, nor by a schedule it writes or enables (which would run as
	// it).
	for _, c := range []struct{ method, path, body string }{
		{"POST", base + "/nightly/trigger", ""}, {"PUT", base + "/nightly", doc}, {"POST", base + "/nightly/enable", ""},
	} {
		if r := send(t, e, scheduler, c.method, c.path, c.body, nil); r.status != http.StatusForbidden {
			t.Errorf("%s %s without jobs/write: %s, want 403", c.method, c.path, r)
		}
	}
	// Attack: a Reader changes nothing and runs nothing.
	for _, c := range []struct{ method, path string }{
		{"POST", base + "/nightly/trigger"}, {"POST", base + "/nightly/disable"}, {"POST", base + "/nightly/enable"}, {"DELETE", base + "/nightly"},
	} {
		if r := send(t, e, reader, c.method, c.path, "", nil); r.status != http.StatusForbidden {
			t.Errorf("a Reader's %s %s: %s, want 403", c.method, c.path, r)
		}
	}
	if r := send(t, e, scheduler, "GET", base+"/nightly", "", nil); r.status != http.StatusOK {
		t.Errorf("schedules/read: %s", r)
	}
	j := mustSend(t, e, contributor, "POST", base+"/nightly/trigger", "", http.StatusCreated).json(t)
	if n, _ := j["name"].(string); !strings.HasPrefix(n, "nightly-") || j["command"] != "echo "+n {
		t.Errorf("triggered job = %v", j)
	}
	off := mustSend(t, e, contributor, "POST", base+"/nightly/disable", "", http.StatusOK).json(t)
	if off["is_enabled"] != false {
		t.Errorf("disable = %v", off)
	}
	mustSend(t, e, contributor, "DELETE", base+"/nightly", "", http.StatusNoContent)
	if r := send(t, e, contributor, "GET", base+"/nightly", "", nil); r.status != http.StatusNotFound {
		t.Errorf("after delete: %s", r)
	}
}

// A schedule that invokes a batch endpoint (Azure's InvokeBatchEndpoint
// action): an endpoint not there is refused at create naming the field;
// a trigger starts the endpoint's parallel job under the firing's name,
// as the caller.
func TestScheduleInvokesBatchEndpoint(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	contributor := addUser(t, e, "carl", identity.RoleContributor)
	mustSend(t, e, contributor, "PUT", "/api/v1/workspaces/default/batch-endpoints/digits", `{"name":"digits"}`, http.StatusCreated)
	mustSend(t, e, contributor, "PUT", "/api/v1/workspaces/default/batch-endpoints/digits/deployments/torch", deploymentDoc(code, ""), http.StatusCreated)
	const base = "/api/v1/workspaces/default/schedules"
	doc := `{"name":"score","trigger":{"type":"recurrence","frequency":"day","interval":1},
		"invoke_batch_endpoint":{"endpoint":"%s","input":"azureml://datastores/workspaceblobstore/paths/digits/"}}`
	if r := send(t, e, contributor, "PUT", base+"/score", strings.Replace(doc, "%s", "nope", 1), nil); r.status != 400 || errTarget(t, r) != "invoke_batch_endpoint.endpoint" {
		t.Errorf("an endpoint not there: %s", r)
	}
	mustSend(t, e, contributor, "PUT", base+"/score", strings.Replace(doc, "%s", "digits", 1), http.StatusCreated)
	j := mustSend(t, e, contributor, "POST", base+"/score/trigger", "", http.StatusCreated).json(t)
	if n, _ := j["name"].(string); !strings.HasPrefix(n, "score-") || j["parallel"] == nil || j["created_by"] != "carl" {
		t.Errorf("triggered job = %v", j)
	}
	got := mustSend(t, e, contributor, "GET", base+"/score", "", http.StatusOK).json(t)
	if st, _ := got["status"].(map[string]any); st == nil || st["last_job"] != j["name"] {
		t.Errorf("show after the trigger = %v", got)
	}
}

package studio_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
)

// call sends a request to the server, set up by with, and returns its
// status and body.
func call(t *testing.T, ts *httptest.Server, method, path, body string, with func(*http.Request)) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	with(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// apiPost posts a body to the API as the studio's script does: the
// session cookie and, when csrf, the session's CSRF header.
func apiPost(t *testing.T, ts *httptest.Server, path, session, body string, csrf bool, contentType string) (int, []byte) {
	t.Helper()
	return call(t, ts, "POST", path, body, func(req *http.Request) {
		req.AddCookie(&http.Cookie{Name: websession.SessionCookie, Value: session})
		req.Header.Set("Content-Type", contentType)
		if csrf {
			req.Header.Set(websession.CSRFHeader, websession.CSRFToken(session))
		}
	})
}

// codeFolder is an uploaded code folder (a gzipped tar with score.py).
func codeFolder(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	src := []byte("def init():\n    pass\n\ndef run(mini_batch):\n    return mini_batch\n")
	if err := tw.WriteHeader(&tar.Header{Name: "score.py", Mode: 0o644, Size: int64(len(src))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(src)
	tw.Close()
	zw.Close()
	return buf.String()
}

// batchFixture makes, through the API as a Contributor, a cluster, a
// registered model, an endpoint whose description is markup and two
// deployments (the first the default), as `shoal batch-endpoint
// create` and `shoal batch-deployment create` would.
func batchFixture(t *testing.T, ts *httptest.Server, contributor string, svcCreate func() error) {
	t.Helper()
	if err := svcCreate(); err != nil {
		t.Fatal(err)
	}
	send := func(method, path, body string, want int) []byte {
		t.Helper()
		status, b := call(t, ts, method, path, body, func(req *http.Request) {
			req.Header.Set("Authorization", "Bearer "+contributor)
			req.Header.Set("Content-Type", "application/json")
		})
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return b
	}
	send("POST", "/api/v1/workspaces/default/models", `{"name":"digits-model","type":"custom_model","path":"azureml://datastores/workspaceblobstore/paths/models/digits/"}`, http.StatusCreated)
	var art struct{ ID string }
	if err := json.Unmarshal(send("POST", "/api/v1/workspaces/default/artifacts", codeFolder(t), http.StatusCreated), &art); err != nil || art.ID == "" {
		t.Fatalf("upload: %v %q", err, art.ID)
	}
	const base = "/api/v1/workspaces/default/batch-endpoints"
	send("PUT", base+"/digits", `{"name":"digits","description":"<script>alert('desc')</script>","tags":{"team":"<b>vision</b>"}}`, http.StatusCreated)
	dep := func(name, settings string) string {
		return `{"name":"` + name + `","endpoint_name":"digits","type":"model","model":"azureml:digits-model@latest","description":"<img src=x onerror=alert(1)>",
		"code_configuration":{"code":"` + art.ID + `","scoring_script":"score.py"},"compute":"azureml:cpu",
		"resources":{"instance_count":2},"settings":` + settings + `}`
	}
	send("PUT", base+"/digits/deployments/torch", dep("torch", `{"mini_batch_size":5,"max_concurrency_per_instance":3,"output_file_name":"out.csv","retry_settings":{"max_retries":4,"timeout":60},"error_threshold":7}`), http.StatusCreated)
	send("PUT", base+"/digits/deployments/keras", dep("keras", `{"output_action":"summary_only"}`), http.StatusCreated)
}

// The batch endpoint pages list the workspace's endpoints (description,
// default deployment, how many deployments) and show one: its fields,
// its deployments with model, compute, instances and settings, the
// scoring URI, and the jobs its invocations started, linked. A
// Contributor gets the invoke form, whose post (the API's invoke route,
// with the session and its CSRF header) starts a job that the page then
// lists; a Reader reads the pages without the form, and their forged
// post is refused, as is a Contributor's without the CSRF header. Markup
// in names, descriptions and tags stays text. A user without a role in
// the workspace is refused the pages.
func TestBatchEndpointPages(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	carl := userWithRole(t, svc, admin, "carl", "Contributor")
	rita := userWithRole(t, svc, admin, "rita", "Reader")
	maxN := 2
	batchFixture(t, ts, carl, func() error {
		_, _, err := svc.CreateOrApplyCompute(admin, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, "")
		return err
	})

	status, list := page(t, ts, "/batch-endpoints", rita)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, list)
	}
	for _, want := range []string{`href="/batch-endpoints/digits"`, "&lt;script&gt;alert(&#39;desc&#39;)&lt;/script&gt;", "<td>torch</td><td>2</td>", `href="/batch-endpoints" aria-current="page"`} {
		if !strings.Contains(list, want) {
			t.Errorf("list misses %s", want)
		}
	}
	status, detail := page(t, ts, "/batch-endpoints/digits", rita)
	if status != http.StatusOK {
		t.Fatalf("endpoint: %d %s", status, detail)
	}
	for _, want := range []string{"torch (default)", "keras", "digits-model", `href="/computes/cpu"`, "<td>2</td>", "max concurrency per instance 3", "mini-batch size 5",
		"output file out.csv", "retries 4", "timeout 60 s", "error threshold 7", "output action summary_only",
		"/api/v1/workspaces/default/batch-endpoints/digits/jobs</code>", "&lt;img src=x onerror=alert(1)&gt;", "&lt;b&gt;vision&lt;/b&gt;", "No jobs yet."} {
		if !strings.Contains(detail, want) {
			t.Errorf("endpoint page misses %s", want)
		}
	}
	for _, bad := range []string{"<script>alert(", "<img src=x", "<b>vision"} {
		if strings.Contains(list+detail, bad) {
			t.Errorf("markup %q is not escaped", bad)
		}
	}
	if strings.Contains(detail, `id="invoke-form"`) {
		t.Error("a Reader is offered the invoke form")
	}

	const invoke = "/api/v1/workspaces/default/batch-endpoints/digits/invoke"
	body := `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/","type":"uri_folder"},"deployment_name":"keras"}`
	if code, b := apiPost(t, ts, invoke, rita, body, true, "application/json"); code != http.StatusForbidden {
		t.Errorf("a Reader's forged invoke: %d %s, want 403", code, b)
	}
	if code, b := apiPost(t, ts, invoke, carl, body, false, "application/json"); code != http.StatusForbidden {
		t.Errorf("an invoke without the CSRF header: %d %s, want 403", code, b)
	}
	if code, b := apiPost(t, ts, invoke, carl, "input.path=x", false, "application/x-www-form-urlencoded"); code != http.StatusForbidden {
		t.Errorf("a cross-site form post: %d %s, want 403", code, b)
	}
	if jobs, err := svc.ListJobs(admin, job.JobFilter{Workspace: "default"}); err != nil || len(jobs) != 0 {
		t.Fatalf("a refused invoke started a job: %v %v", jobs, err)
	}

	_, form := page(t, ts, "/batch-endpoints/digits", carl)
	for _, want := range []string{`id="invoke-form" data-endpoint="digits"`, `name="input.path"`, `<option>mltable</option>`, `<option selected>torch</option>`, `<option>keras</option>`} {
		if !strings.Contains(form, want) {
			t.Errorf("a Contributor's form misses %s", want)
		}
	}
	// What the form's script posts, with the session: a refusal is the
	// API's, naming the field, for the form to show beside it.
	if code, b := apiPost(t, ts, invoke, carl, `{"input":{"path":"/etc"}}`, true, "application/json"); code != http.StatusBadRequest || !strings.Contains(string(b), `"target":"input"`) {
		t.Errorf("invoke on a server path: %d %s", code, b)
	}
	code, b := apiPost(t, ts, invoke, carl, body, true, "application/json")
	if code != http.StatusCreated {
		t.Fatalf("the form's invoke: %d %s", code, b)
	}
	var j job.Job
	if err := json.Unmarshal(b, &j); err != nil || j.Name == "" || j.CreatedBy != "carl" || j.Parallel == nil {
		t.Fatalf("the invocation's job: %v %s", err, b)
	}
	_, detail = page(t, ts, "/batch-endpoints/digits", rita)
	if !strings.Contains(detail, `<a href="/jobs/`+j.Name+`">`+j.Name+`</a></td><td>keras</td>`) {
		t.Errorf("the endpoint page does not list its job %s:\n%s", j.Name, detail)
	}

	if status, _ := page(t, ts, "/batch-endpoints/nope", rita); status != http.StatusNotFound {
		t.Errorf("an endpoint not there: %d", status)
	}
	nora := userWithRole(t, svc, admin, "nora", "Reader")
	if err := svc.UnassignRole(admin, "user:nora", "Reader", "default"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/batch-endpoints", "/batch-endpoints/digits"} {
		if status, body := page(t, ts, p, nora); status != http.StatusForbidden || strings.Contains(body, "torch") {
			t.Errorf("%s for a user without a role: %d", p, status)
		}
	}
}

package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/fake"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/internal/workload"
)

// reply is an HTTP response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %q", r.status, r.body)
	}
	return m
}

func (r reply) String() string {
	b := string(r.body)
	if len(b) > 300 {
		b = b[:300] + "…"
	}
	return fmt.Sprintf("%d %s", r.status, strings.TrimSpace(b))
}

// send makes a request; token "" sends no Authorization header, and
// cookies are name=value pairs.
func send(t *testing.T, e *testEnv, token, method, path, body string, hdr map[string]string, cookies ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		name, value, _ := strings.Cut(c, "=")
		req.AddCookie(&http.Cookie{Name: name, Value: value})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// mustSend sends and fails the test unless the status is want.
func mustSend(t *testing.T, e *testEnv, token, method, path, body string, want int) reply {
	t.Helper()
	r := send(t, e, token, method, path, body, nil)
	if r.status != want {
		t.Fatalf("%s %s: %s, want %d", method, path, r, want)
	}
	return r
}

// addUser creates a user as the admin, assigns it role in the default
// workspace (none when ""), and returns a fresh API token of the user.
func addUser(t *testing.T, e *testEnv, name, role string) string {
	t.Helper()
	mustSend(t, e, e.admin, "POST", "/api/v1/users", `{"name":"`+name+`"}`, http.StatusCreated)
	if role != "" {
		mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/roleassignments",
			`{"principal":"user:`+name+`","role":"`+role+`"}`, http.StatusCreated)
	}
	r := mustSend(t, e, e.admin, "POST", "/api/v1/users/"+name+"/tokens", `{"name":"test"}`, http.StatusCreated)
	tok, _ := r.json(t)["token"].(string)
	if !strings.HasPrefix(tok, identity.TokenPrefix) {
		t.Fatalf("token of %s: %q", name, tok)
	}
	return tok
}

const computeDoc = `{"name":"%s","size":"Standard_DS3_v2","max_instances":2}`

func jobDoc(name string) string {
	return `{"name":"` + name + `","command":"echo hi","compute":"cpu"}`
}

// TestRoleMatrixOverHTTP checks, route by route, what a Reader, a
// Contributor and an Owner of the default workspace may do. A request that
// is allowed may still fail for a missing resource, but never with 401/403;
// a denied one is exactly 403 and changes nothing.
func TestRoleMatrixOverHTTP(t *testing.T) {
	e := newTestEnv(t)
	users := []struct{ name, role string }{
		{"alice", identity.RoleReader},
		{"bob", identity.RoleContributor},
		{"carol", identity.RoleOwner},
		{"dave", ""}, // no role at all
	}
	tokens := map[string]string{"admin": e.admin}
	for _, u := range users {
		tokens[u.name] = addUser(t, e, u.name, u.role)
	}
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", fmt.Sprintf(computeDoc, "cpu"), http.StatusCreated)
	// A job per user to cancel, and one everybody reads.
	for _, who := range []string{"admin", "alice", "bob", "carol", "dave"} {
		mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/jobs", jobDoc("cancel-"+who), http.StatusCreated)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/users", `{"name":"erin"}`, http.StatusCreated)

	const (
		deny  = -1 // exactly 403
		maybe = 0  // allowed: anything but 401/403
	)
	type row struct {
		method, path, body string
		// wants per caller: admin, alice (Reader), bob (Contributor), carol (Owner), dave (none)
		admin, reader, contributor, owner, none int
	}
	ws := "/api/v1/workspaces/default"
	rows := func(who string) []row {
		c := ws + "/computes/c-" + who
		return []row{
			{"GET", "/api/v1/whoami", "", 200, 200, 200, 200, 200},
			{"GET", ws, "", 200, 200, 200, 200, deny},
			{"GET", ws + "/computes", "", 200, 200, 200, 200, deny},
			{"GET", ws + "/computes/cpu", "", 200, 200, 200, 200, deny},
			{"GET", ws + "/computes/nope", "", 404, 404, 404, 404, deny},
			{"PUT", c, fmt.Sprintf(computeDoc, "c-"+who), 201, deny, 201, 201, deny},
			{"PATCH", c, `{"max_instances":3}`, 200, deny, 200, 200, deny},
			{"PATCH", ws + "/computes/nope", `{"max_instances":3}`, 404, deny, 404, 404, deny},
			{"GET", ws + "/computes/cpu/nodes", "", 200, 200, 200, 200, deny},
			{"POST", ws + "/computes/cpu/nodes/cpu-n1/preempt", "", maybe, deny, deny, maybe, deny},
			{"DELETE", c, "", 202, deny, 202, 202, deny},
			{"GET", ws + "/jobs", "", 200, 200, 200, 200, deny},
			{"POST", ws + "/jobs", jobDoc("job-" + who), 201, deny, 201, 201, deny},
			{"PUT", ws + "/jobs/put-" + who, jobDoc("put-" + who), 201, deny, 201, 201, deny},
			{"GET", ws + "/jobs/cancel-" + who, "", 200, 200, 200, 200, deny},
			{"POST", ws + "/jobs/cancel-" + who + "/cancel", "", 202, deny, 202, 202, deny},
			{"POST", ws + "/jobs/nope/cancel", "", 404, deny, 404, 404, deny},
			{"POST", ws + "/artifacts", "tarball of " + who, 201, deny, 201, 201, deny},
			{"POST", ws + "/environments", `{"name":"env-` + who + `","image":"python:3.11"}`, 201, deny, 201, 201, deny},
			{"PUT", ws + "/environments/env-" + who + "/versions/7", `{"image":"python:3.12"}`, 201, deny, 201, 201, deny},
			{"GET", ws + "/environments", "", 200, 200, 200, 200, deny},
			{"GET", ws + "/environments/nope/labels/latest", "", 404, 404, 404, 404, deny},
			{"GET", ws + "/environments/nope/versions/1", "", 404, 404, 404, 404, deny},
			{"POST", ws + "/environments/nope/archive", "", 404, deny, 404, 404, deny},
			{"POST", ws + "/environments/nope/restore?version=1", "", 404, deny, 404, 404, deny},
			{"POST", ws + "/registries", `{"server":"r-` + who + `.example.com","username":"u","password":"p"}`, 201, deny, deny, 201, deny},
			{"GET", ws + "/registries", "", 200, 200, 200, 200, deny},
			{"DELETE", ws + "/registries/r-" + who + ".example.com", "", 204, deny, deny, 204, deny},
			{"DELETE", ws + "/registries/nope.example.com", "", 404, deny, deny, 404, deny},
			{"POST", ws + "/webhooks", `{"name":"h-` + who + `","url":"https://203.0.113.7/h","events":["job_failed"]}`, 201, deny, deny, 201, deny},
			{"GET", ws + "/webhooks", "", 200, deny, deny, 200, deny},
			{"GET", ws + "/webhooks/h-" + who, "", 200, deny, deny, 200, deny},
			{"GET", ws + "/webhooks/h-" + who + "/deliveries", "", 200, deny, deny, 200, deny},
			{"POST", ws + "/webhooks/h-" + who + "/test", "", 202, deny, deny, 202, deny},
			{"POST", ws + "/webhooks/h-" + who + "/rotate-secret", "", 200, deny, deny, 200, deny},
			{"DELETE", ws + "/webhooks/h-" + who, "", 204, deny, deny, 204, deny},
			{"DELETE", ws + "/webhooks/nope", "", 404, deny, deny, 404, deny},
			{"PUT", ws + "/datastores/ds-" + who, `{"type":"nfs","path":"/mnt/` + who + `"}`, 201, deny, 201, 201, deny},
			{"GET", ws + "/datastores", "", 200, 200, 200, 200, deny},
			{"GET", ws + "/datastores/workspaceblobstore", "", 200, 200, 200, 200, deny},
			{"DELETE", ws + "/datastores/ds-" + who, "", 204, deny, 204, 204, deny},
			{"DELETE", ws + "/datastores/nope", "", 404, deny, 404, 404, deny},
			{"GET", ws + "/roleassignments", "", 200, 200, 200, 200, deny},
			{"POST", ws + "/roleassignments", `{"principal":"user:erin","role":"Reader"}`, 201, deny, deny, 201, deny},
			{"DELETE", ws + "/roleassignments?principal=user:erin&role=Reader", "", 204, deny, deny, 204, deny},
			{"POST", "/api/v1/workspaces", `{"name":"ws-` + who + `"}`, 201, deny, deny, deny, deny},
			{"GET", "/api/v1/users", "", 200, deny, deny, deny, deny},
			{"POST", "/api/v1/users", `{"name":"u-` + who + `"}`, 201, deny, deny, deny, deny},
			{"POST", "/api/v1/users/erin/disable", "", 200, deny, deny, deny, deny},
			{"POST", "/api/v1/users/erin/enable", "", 200, deny, deny, deny, deny},
			{"GET", "/api/v1/users/erin", "", 200, deny, deny, deny, deny},
			{"POST", "/api/v1/users/erin/tokens", `{"name":"stolen"}`, 201, deny, deny, deny, deny},
			{"GET", "/api/v1/users/erin/tokens", "", 200, deny, deny, deny, deny},
			{"POST", "/api/v1/roles", `{"name":"r-` + who + `","actions":["jobs/read"]}`, 201, deny, deny, deny, deny},
			{"POST", "/api/v1/identities", `{"name":"id-` + who + `"}`, 201, deny, deny, deny, deny},
			{"GET", "/api/v1/audit", "", 200, deny, deny, deny, deny},
			// Workspace names are case-insensitive, for grants and refusals alike.
			{"GET", "/api/v1/workspaces/DEFAULT/computes", "", 200, 200, 200, 200, deny},
			{"PUT", "/api/v1/workspaces/Default/computes/cc-" + who, fmt.Sprintf(computeDoc, "cc-"+who), 201, deny, 201, 201, deny},
			// Another workspace: no role there, whether or not it exists (a
			// write does not create it, even an admin's).
			{"GET", "/api/v1/workspaces/elsewhere/computes", "", 404, deny, deny, deny, deny},
			{"PUT", "/api/v1/workspaces/elsewhere/computes/xyz", fmt.Sprintf(computeDoc, "xyz"), 404, deny, deny, deny, deny},
			// Deleting a workspace: owners and administrators; "default" is
			// never deleted (every start creates it again).
			{"DELETE", "/api/v1/workspaces/default", "", 400, deny, deny, 400, deny},
			{"DELETE", "/api/v1/workspaces/elsewhere", "", 404, deny, deny, deny, deny},
		}
	}

	for _, who := range []string{"alice", "bob", "carol", "dave", "admin"} {
		for _, r := range rows(who) {
			var want int
			switch who {
			case "admin":
				want = r.admin
			case "alice":
				want = r.reader
			case "bob":
				want = r.contributor
			case "carol":
				want = r.owner
			case "dave":
				want = r.none
			}
			got := send(t, e, tokens[who], r.method, r.path, r.body, nil)
			what := fmt.Sprintf("%s: %s %s", who, r.method, r.path)
			switch want {
			case deny:
				if got.status != http.StatusForbidden {
					t.Errorf("%s: %s, want 403", what, got)
				} else if code, _ := got.json(t)["error"].(map[string]any)["code"].(string); code != core.EFORBIDDEN {
					t.Errorf("%s: error code %q, want %q", what, code, core.EFORBIDDEN)
				}
			case maybe:
				if got.status == http.StatusUnauthorized || got.status == http.StatusForbidden || got.status >= 500 {
					t.Errorf("%s: %s, want allowed", what, got)
				}
			default:
				if got.status != want {
					t.Errorf("%s: %s, want %d", what, got, want)
				}
			}
		}
	}
	// Denied requests changed nothing.
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	for _, who := range []string{"alice", "dave"} {
		if _, err := e.svc.FindCompute(ctx, "default", "c-"+who); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("compute c-%s exists after a denied PUT: %v", who, err)
		}
		if _, err := e.svc.FindJob(ctx, "default", "job-"+who); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("job job-%s exists after a denied POST: %v", who, err)
		}
		if j, err := e.svc.FindJob(ctx, "default", "cancel-"+who); err != nil || j.Status != job.JobQueued {
			t.Errorf("job cancel-%s after a denied cancel: %v %v", who, j, err)
		}
		if _, err := e.svc.FindUser(ctx, "u-"+who); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("user u-%s exists after a denied POST: %v", who, err)
		}
	}
	for _, who := range []string{"bob", "carol", "admin"} {
		if j, err := e.svc.FindJob(ctx, "default", "cancel-"+who); err != nil || j.Status != job.JobCanceled {
			t.Errorf("job cancel-%s after an allowed cancel: %v %v", who, j, err)
		}
	}
	if toks, err := e.svc.ListTokens(ctx, "erin"); err != nil || len(toks) != 1 {
		t.Errorf("erin has %d tokens (%v), want only the admin's", len(toks), err)
	}
	if as, _ := e.svc.ListRoleAssignments(ctx, "default"); len(as) != 3 {
		t.Errorf("%d role assignments in default, want 3 (alice, bob, carol): %v", len(as), as)
	}

	// The refusals are in the audit log.
	r := mustSend(t, e, e.admin, "GET", "/api/v1/audit?principal=user:alice", "", http.StatusOK)
	var audit struct {
		Value []identity.AuditRecord `json:"value"`
	}
	if err := json.Unmarshal(r.body, &audit); err != nil {
		t.Fatal(err)
	}
	denied := 0
	for _, a := range audit.Value {
		if a.Outcome == identity.AuditDenied {
			denied++
		}
	}
	if denied == 0 {
		t.Errorf("no denied record for alice in the audit log: %v", audit.Value)
	}
}

// TestDisabledUserAndRevokedToken: both stop working at once.
func TestDisabledUserAndRevokedToken(t *testing.T) {
	e := newTestEnv(t)
	tok := addUser(t, e, "bob", identity.RoleContributor)
	mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/computes", "", http.StatusOK)
	mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/disable", "", http.StatusOK)
	mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/computes", "", http.StatusUnauthorized)
	mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/enable", "", http.StatusOK)
	mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/computes", "", http.StatusOK)

	// bob revokes his own token; afterwards it is refused.
	r := mustSend(t, e, tok, "GET", "/api/v1/users/bob/tokens", "", http.StatusOK)
	list, _ := r.json(t)["value"].([]any)
	if len(list) != 1 {
		t.Fatalf("bob's tokens: %s", r)
	}
	id := list[0].(map[string]any)["id"].(string)
	other := addUser(t, e, "mallory", identity.RoleOwner)
	mustSend(t, e, other, "POST", "/api/v1/tokens/"+id+"/revoke", "", http.StatusForbidden)
	mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/computes", "", http.StatusOK)
	mustSend(t, e, tok, "POST", "/api/v1/tokens/"+id+"/revoke", "", http.StatusOK)
	mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/computes", "", http.StatusUnauthorized)
}

// joinNode queues work for the fake provider, runs a controller pass and
// joins the node it provisioned; it returns the node ID and credential.
func joinNode(t testing.TB, e *testEnv) (string, string) {
	t.Helper()
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "gpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if err := control.New(e.svc, 1).ReconcileComputes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: "j-gpu", Command: "echo hi", Compute: "gpu"}); err != nil {
		t.Fatal(err)
	}
	ctrl := control.New(e.svc, 1)
	if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	var prov []fake.Provisioned
	for _, p := range e.prov.TakeProvisioned() {
		if p.Req.Node.Compute == "gpu" {
			prov = append(prov, p)
		}
	}
	if len(prov) != 1 {
		t.Fatalf("the fake provider got %d nodes of gpu to provision, want 1", len(prov))
	}
	id := prov[0].Req.Node.ID
	resp, err := e.svc.JoinNode(ctx, prov[0].Req.JoinToken, node.JoinRequest{NodeID: id, Address: "127.0.0.1", Port: 5001})
	if err != nil {
		t.Fatal(err)
	}
	return id, resp.Credential
}

// TestCredentialsStayInTheirLane: a node credential is no user token, a
// user token is no node credential, and a workload token is only good
// while its attempt runs.
func TestCredentialsStayInTheirLane(t *testing.T) {
	e := newTestEnv(t)
	_, cred := joinNode(t, e)

	// The node credential works where it belongs...
	mustSend(t, e, cred, "POST", "/agent/v1/sync", `{}`, http.StatusOK)
	// ...and nowhere else.
	for _, p := range []struct{ method, path, body string }{
		{"GET", "/api/v1/whoami", ""},
		{"GET", "/api/v1/workspaces", ""},
		{"GET", "/api/v1/workspaces/default/computes", ""},
		{"GET", "/api/v1/workspaces/default/jobs/j-gpu", ""},
		{"POST", "/api/v1/workspaces/default/jobs", jobDoc("from-node")},
		{"GET", "/api/v1/audit", ""},
	} {
		if r := send(t, e, cred, p.method, p.path, p.body, nil); r.status != http.StatusUnauthorized {
			t.Errorf("node credential on %s %s: %s, want 401", p.method, p.path, r)
		}
	}

	// User and admin tokens are no node credentials.
	bob := addUser(t, e, "bob", identity.RoleOwner)
	for _, tok := range []string{e.admin, bob} {
		for _, p := range []struct{ method, path, body string }{
			{"POST", "/agent/v1/sync", `{}`},
			{"POST", "/agent/v1/attempts/att-1/ranks/0/status", `{"state":"Completed"}`},
			{"POST", "/agent/v1/attempts/att-1/ranks/0/logs?offset=0", "log"},
			{"PUT", "/agent/v1/attempts/att-1/ranks/0/outputs", "tgz"},
			{"GET", "/agent/v1/attempts/att-1/ranks/0/restore", ""},
			{"POST", "/agent/v1/attempts/att-1/ranks/0/token", `{"resource":"shoal"}`},
			{"GET", "/agent/v1/artifacts/sha256:" + strings.Repeat("0", 64), ""},
			{"GET", "/agent/v1/attempts/att-1/ranks/0/inputs/data", ""},
		} {
			if r := send(t, e, tok, p.method, p.path, p.body, nil); r.status != http.StatusUnauthorized {
				t.Errorf("API token on %s %s: %s, want 401", p.method, p.path, r)
			}
		}
	}
	// Nor is a node credential a join token.
	if r := send(t, e, cred, "POST", "/agent/v1/join", `{"node_id":"gpu-n1"}`, nil); r.status != http.StatusUnauthorized {
		t.Errorf("node credential as a join token: %s, want 401", r)
	}

	// A validly signed workload token for an attempt that does not exist.
	ctx := context.Background()
	for _, c := range []workload.Claims{
		{Subject: "identity:x", Audience: "shoal", AttemptID: "att-does-not-exist", Submitter: "admin"},
		{Subject: "identity:x", Audience: "shoal", Submitter: "admin"},
	} {
		tok, _, err := e.svc.Workload().Mint(ctx, c, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !workload.LooksLikeJWT(tok) {
			t.Fatalf("minted token does not look like a JWT: %q", tok)
		}
		for _, p := range []string{"/api/v1/whoami", "/api/v1/workspaces/default/computes", "/api/v1/users"} {
			if r := send(t, e, tok, "GET", p, "", nil); r.status != http.StatusUnauthorized {
				t.Errorf("workload token for attempt %q on %s: %s, want 401", c.AttemptID, p, r)
			}
		}
		if r := send(t, e, tok, "POST", "/agent/v1/sync", `{}`, nil); r.status != http.StatusUnauthorized {
			t.Errorf("workload token on /agent/v1/sync: %s, want 401", r)
		}
	}
}

func TestCSRF(t *testing.T) {
	e := newTestEnv(t)
	const path = "/api/v1/workspaces/default/computes/csrf"
	doc := fmt.Sprintf(computeDoc, "csrf")
	session := websession.SessionCookie + "=x"

	wantCSRFRefusal := func(what string, r reply) {
		t.Helper()
		if r.status != http.StatusForbidden {
			t.Errorf("%s: %s, want 403", what, r)
			return
		}
		if msg, _ := r.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, websession.CSRFHeader) {
			t.Errorf("%s: refusal %q does not name %s", what, msg, websession.CSRFHeader)
		}
	}

	for _, p := range []struct{ method, path string }{
		{"PUT", path}, {"PATCH", path}, {"DELETE", path},
		{"POST", "/api/v1/workspaces/default/jobs"}, {"POST", "/api/v1/users"},
	} {
		wantCSRFRefusal(p.method+" "+p.path+" with a session and no CSRF header", send(t, e, "", p.method, p.path, doc, nil, session))
	}
	wantCSRFRefusal("a wrong CSRF header", send(t, e, "", "PUT", path, doc, map[string]string{websession.CSRFHeader: "tok"}, session))
	wantCSRFRefusal("empty CSRF header", send(t, e, "", "PUT", path, doc, map[string]string{websession.CSRFHeader: ""}, session))
	wantCSRFRefusal("agent route", send(t, e, "", "POST", "/agent/v1/sync", `{}`, nil, session))
	// A bearer token does not excuse a request that also carries a session.
	wantCSRFRefusal("session plus admin token", send(t, e, e.admin, "PUT", path, doc, nil, session))
	mustSend(t, e, e.admin, "GET", path, "", http.StatusNotFound)

	// The session's token passes CSRF; the cookie x itself authenticates
	// nothing, so the request is then unauthenticated.
	r := send(t, e, "", "PUT", path, doc, map[string]string{websession.CSRFHeader: websession.CSRFToken("x")}, session)
	if r.status != http.StatusUnauthorized {
		t.Errorf("the session's CSRF token: %s, want 401", r)
	}
	// With a token as well, the change is made.
	r = send(t, e, e.admin, "PUT", path, doc, map[string]string{websession.CSRFHeader: websession.CSRFToken("x")}, session)
	if r.status != http.StatusCreated {
		t.Errorf("the session's CSRF token with the admin token: %s, want 201", r)
	}

	// Reads are never blocked by CSRF.
	if r := send(t, e, "", "GET", path, "", nil, session); r.status != http.StatusUnauthorized {
		t.Errorf("GET with a session cookie: %s, want 401", r)
	}
	if r := send(t, e, e.admin, "GET", path, "", nil, session); r.status != http.StatusOK {
		t.Errorf("GET with a session cookie and the admin token: %s, want 200", r)
	}
	if r := send(t, e, "", "GET", "/healthz", "", nil, session); r.status != http.StatusOK {
		t.Errorf("GET /healthz with a session cookie: %s, want 200", r)
	}
	// Without a session cookie no CSRF header is needed.
	mustSend(t, e, e.admin, "PATCH", path, `{"max_instances":3}`, http.StatusOK)
}

func TestRequestSizeLimit(t *testing.T) {
	e := newTestEnv(t)
	pad := strings.Repeat("x", 2<<20)
	for _, p := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/workspaces/default/computes/big", `{"name":"big","size":"Standard_DS3_v2","description":"` + pad + `"}`},
		{"PATCH", "/api/v1/workspaces/default/computes/big", `{"description":"` + pad + `"}`},
		{"POST", "/api/v1/workspaces/default/jobs", `{"name":"big","command":"echo","compute":"cpu","description":"` + pad + `"}`},
		{"POST", "/api/v1/users", `{"name":"` + pad + `"}`},
	} {
		r := send(t, e, e.admin, p.method, p.path, p.body, nil)
		if r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with a 2 MiB body: %s, want 413", p.method, p.path, r)
		}
	}
	mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/computes/big", "", http.StatusNotFound)
}

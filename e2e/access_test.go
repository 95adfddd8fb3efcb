package e2e_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Identity and access end to end: users, API tokens, `shoal login`, roles,
// managed identities of jobs and the audit log, with the real binary.

// accessFixture is what the subtests of TestAccess share.
type accessFixture struct {
	s     *server
	admin string // the admin API token
	alice string // alice's "laptop" token
	bob   string
	rita  string

	mu sync.Mutex
	// secrets are every credential the test has seen (API tokens, workload
	// tokens, credentials presented that are not valid), by label: none may
	// show in a log or a response that is not the one creating it.
	secrets map[string]string
	// deniedWorkloadWrite is the attempt whose workload (the identity
	// default.msi-reader, job submitted by admin) was refused computes/write.
	deniedWorkloadWrite    string
	deniedWorkloadIdentity string
}

const (
	accessCluster = "shared-cluster" // a compute everyone reads
	readerRole    = "Reader"
	submitterRole = "JobSubmitter" // custom: jobs/write + artifacts/write
)

func (f *accessFixture) secret(label, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[label] = value
}

// as is the CLI environment of the admin's HOME (so the server's URL) with
// SHOAL_TOKEN set: the env override of the client config's token.
func (f *accessFixture) as(token string) []string {
	return append(slices.Clone(f.s.env), "SHOAL_TOKEN="+token)
}

// createToken runs `token create -o json` and returns the token's id and
// the token itself.
func (f *accessFixture) createToken(t *testing.T, env []string, user, name string, extra ...string) (id, token string) {
	t.Helper()
	out := runJSON[map[string]any](t, env, append([]string{"token", "create", "--user", user, "--name", name, "-o", "json"}, extra...)...)
	id, token = jsonStr(out["id"]), jsonStr(out["token"])
	if id == "" || !strings.HasPrefix(token, "shoal_") {
		t.Fatalf("token create --user %s --name %s printed no id or no shoal_ token: %v", user, name, out)
	}
	f.secret(user+"/"+name, token)
	return id, token
}

// refused runs a CLI command that must be refused for lack of a right:
// exit code 1 and a message saying that who may not.
func refused(t *testing.T, env []string, who string, args ...string) {
	t.Helper()
	stdout, stderr, code := run(t, env, args...)
	if code != 1 || !strings.Contains(stderr, "may not") || !strings.Contains(stderr, who) {
		t.Errorf("shoal %s as %s: exit code %d, stderr %q (stdout %q); want exit code 1 and a message saying %s may not",
			strings.Join(args, " "), who, code, strings.TrimSpace(stderr), strings.TrimSpace(stdout), who)
	}
}

// unauthenticated runs a CLI command that must fail because the token is
// no longer (or never was) valid: exit code 1, not a refusal of a right.
func unauthenticated(t *testing.T, env []string, what string, args ...string) {
	t.Helper()
	stdout, stderr, code := run(t, env, args...)
	if code != 1 || strings.Contains(stderr, "may not") || !strings.Contains(strings.ToLower(stderr), "token") && !strings.Contains(strings.ToLower(stderr), "disabled") {
		t.Errorf("shoal %s with %s: exit code %d, stderr %q (stdout %q); want exit code 1 and a message that the token is not valid",
			strings.Join(args, " "), what, code, strings.TrimSpace(stderr), strings.TrimSpace(stdout))
	}
}

// httpCase is one raw HTTP request and the status it must get.
type httpCase struct {
	method, path, body string
}

func (c httpCase) String() string { return c.method + " " + c.path }

func (c httpCase) do(t *testing.T, s *server, token string) (int, string) {
	t.Helper()
	var body []byte
	if c.body != "" {
		body = []byte(c.body)
	}
	code, _, resp := s.httpDo(t, c.method, c.path, token, body, nil)
	return code, strings.TrimSpace(string(resp))
}

// wantStatus sends each request with token and requires status want.
func wantStatus(t *testing.T, s *server, who, token string, want int, cases ...httpCase) {
	t.Helper()
	for _, c := range cases {
		if code, body := c.do(t, s, token); code != want {
			t.Errorf("%s as %s: HTTP %d %s; want %d", c, who, code, body, want)
		}
	}
}

const wsAPI = "/api/v1/workspaces/default"

// accessFile returns the path of a file in testdata/access.
func accessFile(t *testing.T, name string) string { t.Helper(); return testdataFile(t, "access", name) }

// accessVariant writes a copy of a testdata/access file with each old
// string replaced by its new one.
func accessVariant(t *testing.T, name string, replacements ...string) string {
	t.Helper()
	return testdataVariant(t, "access", name, replacements...)
}

// TestAccess runs one server; its subtests run in order on it and share
// its users and tokens, and the last ones (audit, secrets) check what the
// earlier ones left in the audit log and the logs:
//
//   - alice is a Reader in `default`;
//   - bob is a Contributor;
//   - rita is a Reader who may also submit jobs (a custom role granting
//     jobs/write and artifacts/write only): a plain Reader cannot submit a
//     job at all, and the workload tests need a submitter with no more than
//     read rights on computes.
func TestAccess(t *testing.T) {
	t.Parallel()
	start := time.Now()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	f := &accessFixture{s: s, admin: s.adminToken(t), secrets: map[string]string{}}
	f.secret("admin", f.admin)

	// Users, roles and tokens, made by the admin (the server's client config).
	for _, u := range []string{"alice", "bob", "rita"} {
		mustRun(t, s.env, "user", "create", "--name", u, "-o", "none")
	}
	mustRun(t, s.env, "role", "assign", "--user", "alice", "--role", readerRole, "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "bob", "--role", "Contributor", "-o", "none")
	mustRun(t, s.env, "role", "create", "--name", submitterRole, "--actions", "jobs/write,artifacts/write",
		"--description", "submit jobs (with their code); nothing else", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "rita", "--role", readerRole, "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "rita", "--role", submitterRole, "-o", "none")
	_, f.alice = f.createToken(t, s.env, "alice", "laptop", "--expires-in", "30d")
	_, f.bob = f.createToken(t, s.env, "bob", "laptop")
	_, f.rita = f.createToken(t, s.env, "rita", "laptop")

	// A compute and a job everyone may read, made by the admin. Its node
	// stays for the whole test (agent-routes reads its agent's used join
	// token): on a loaded 2-core machine the test ran 17 minutes, and the
	// default 120 s idle time had released the node (CI, 2026-12-01).
	createCluster(t, s, accessCluster, "--max-instances", "1", "--idle-time-before-scale-down", "3600")
	helloJob := submitJob(t, s, jobFile(t, "hello.yml"), "--compute", accessCluster)

	t.Run("reader", func(t *testing.T) { testAccessReader(t, f, helloJob) })
	t.Run("contributor", func(t *testing.T) { testAccessContributor(t, f) })
	t.Run("anonymous", func(t *testing.T) { testAccessAnonymous(t, f) })
	t.Run("login", func(t *testing.T) { testAccessLogin(t, f) })
	t.Run("revocation", func(t *testing.T) { testAccessRevocation(t, f) })
	t.Run("workload", func(t *testing.T) { testAccessWorkload(t, f) })
	t.Run("agent-routes", func(t *testing.T) { testAccessAgentRoutes(t, f) })
	t.Run("audit", func(t *testing.T) { testAccessAudit(t, f) })
	t.Run("secrets", func(t *testing.T) { testAccessSecrets(t, f) })
	t.Logf("TestAccess took %s", time.Since(start).Round(time.Millisecond))
}

// testAccessReader: a Reader reads and changes nothing, on the CLI (exit
// code 1, "alice may not ...") and over HTTP (403).
func testAccessReader(t *testing.T, f *accessFixture, helloJob string) {
	s, env := f.s, f.as(f.alice)

	computes := runJSON[[]map[string]any](t, env, "compute", "list", "-o", "json")
	if !slices.ContainsFunc(computes, func(c map[string]any) bool { return jsonStr(c["name"]) == accessCluster }) {
		t.Errorf("compute list as alice does not hold %s: %v", accessCluster, computes)
	}
	if c := runJSON[map[string]any](t, env, "compute", "show", "-n", accessCluster, "-o", "json"); jsonStr(c["name"]) != accessCluster {
		t.Errorf("compute show -n %s as alice: %v", accessCluster, c)
	}
	jobs := runJSON[[]jobView](t, env, "job", "list", "-o", "json")
	if !slices.ContainsFunc(jobs, func(j jobView) bool { return j.Name == helloJob }) {
		t.Errorf("job list as alice does not hold %s: %v", helloJob, jobs)
	}
	wantStatus(t, s, "alice", f.alice, http.StatusOK,
		httpCase{"GET", wsAPI + "/computes", ""},
		httpCase{"GET", wsAPI + "/computes/" + accessCluster, ""},
		httpCase{"GET", wsAPI + "/jobs", ""},
		httpCase{"GET", wsAPI + "/jobs/" + helloJob, ""},
		httpCase{"GET", wsAPI + "/roleassignments", ""},
	)

	for _, args := range [][]string{
		{"compute", "create", "--name", "alice-cluster"},
		{"compute", "update", "-n", accessCluster, "--max-instances", "3"},
		{"compute", "delete", "-n", accessCluster, "--yes"},
		{"job", "create", "-f", jobFile(t, "hello.yml"), "--compute", accessCluster},
		{"job", "cancel", "-n", helloJob},
		{"role", "assign", "--user", "alice", "--role", "Owner"},
	} {
		refused(t, env, "alice", args...)
	}
	wantStatus(t, s, "alice", f.alice, http.StatusForbidden,
		httpCase{"PUT", wsAPI + "/computes/alice-cluster", `{"type": "amlcompute"}`},
		httpCase{"PATCH", wsAPI + "/computes/" + accessCluster, `{"max_instances": 3}`},
		httpCase{"DELETE", wsAPI + "/computes/" + accessCluster, ""},
		httpCase{"POST", wsAPI + "/jobs", `{"command": "echo hi", "compute": "` + accessCluster + `"}`},
		httpCase{"PUT", wsAPI + "/jobs/alice-job", `{"command": "echo hi", "compute": "` + accessCluster + `"}`},
		httpCase{"POST", wsAPI + "/jobs/" + helloJob + "/cancel", ""},
		httpCase{"POST", wsAPI + "/roleassignments", `{"principal": "user:alice", "role": "Owner"}`},
		httpCase{"DELETE", wsAPI + "/roleassignments?principal=user:alice&role=Reader", ""},
		httpCase{"POST", "/api/v1/users", `{"name": "mallory"}`},
		httpCase{"GET", "/api/v1/users", ""},
		httpCase{"GET", "/api/v1/audit", ""},
		httpCase{"POST", "/api/v1/users/bob/tokens", `{"name": "stolen"}`},
	)

	// Roles are per workspace: a Reader of default reads nothing in another.
	mustRun(t, s.env, "workspace", "create", "-n", "other-ws", "-o", "none")
	mustRun(t, s.env, "compute", "create", "--name", "other-cluster", "-w", "other-ws", "-o", "none")
	refused(t, env, "alice", "compute", "list", "-w", "other-ws")
	refused(t, env, "alice", "compute", "show", "-n", "other-cluster", "-w", "other-ws")
	wantStatus(t, s, "alice", f.alice, http.StatusForbidden,
		httpCase{"GET", "/api/v1/workspaces/other-ws/computes", ""},
		httpCase{"GET", "/api/v1/workspaces/other-ws/jobs", ""},
	)

	// Nothing changed.
	if c := show(t, s, accessCluster); jsonInt(c["max_instances"]) != 1 {
		t.Errorf("%s has max_instances %v after alice's refused update, want 1", accessCluster, c["max_instances"])
	}
	if _, _, code := run(t, s.env, "compute", "show", "-n", "alice-cluster"); code == 0 {
		t.Errorf("alice-cluster exists although alice's create was refused")
	}
	if j := getJob(t, s, helloJob); j.Status == "Canceled" || j.Status == "CancelRequested" {
		t.Errorf("alice's refused cancel canceled %s: %s", helloJob, j)
	}
	for _, a := range runJSON[[]map[string]any](t, s.env, "role", "list-assignments", "-o", "json") {
		if jsonStr(a["principal_id"]) == "user:alice" && jsonStr(a["role"]) != readerRole {
			t.Errorf("alice holds %s after her refused role assign", jsonStr(a["role"]))
		}
	}
}

// testAccessContributor: a Contributor creates, changes and deletes
// computes and submits and cancels jobs, but may not grant roles.
func testAccessContributor(t *testing.T, f *accessFixture) {
	s, env := f.s, f.as(f.bob)
	const cluster = "bob-cluster"
	mustRun(t, env, "compute", "create", "--name", cluster, "--max-instances", "1", "-o", "none")
	if c := show(t, s, cluster); jsonStr(c["created_by"]) != "bob" {
		t.Errorf("%s: created_by %q, want bob", cluster, jsonStr(c["created_by"]))
	}
	if c := runJSON[map[string]any](t, env, "compute", "update", "-n", cluster, "--max-instances", "2", "-o", "json"); jsonInt(c["max_instances"]) != 2 {
		t.Errorf("compute update as bob: max_instances %v, want 2", c["max_instances"])
	}
	j := runJSON[map[string]any](t, env, "job", "create", "-f", jobFile(t, "sleep5.yml"), "--compute", cluster, "-o", "json")
	name := jsonStr(j["name"])
	if name == "" {
		t.Fatalf("job create as bob printed no name: %v", j)
	}
	if jsonStr(j["created_by_principal"]) != "user:bob" {
		t.Errorf("bob's job: created_by_principal %q, want user:bob", jsonStr(j["created_by_principal"]))
	}
	// Cancel once it runs. (A cancel that lands between the scheduler's
	// choice of a node and the agent taking the attempt can stay
	// CancelRequested for ever: the server neither starts nor stops a
	// Preparing rank of a job being canceled. That is a scheduling bug,
	// not a question of bob's right to cancel.)
	waitJob(t, s, name, 30*time.Second, "Running")
	mustRun(t, env, "job", "cancel", "-n", name, "-o", "none")
	waitJob(t, s, name, 30*time.Second, "Canceled")
	mustRun(t, env, "compute", "delete", "-n", cluster, "--yes", "-o", "none")
	if _, _, code := run(t, s.env, "compute", "show", "-n", cluster); code == 0 {
		t.Errorf("%s still exists after bob deleted it", cluster)
	}

	// Contributor in default only: not in another workspace, nor in one a
	// first write would create.
	refused(t, env, "bob", "compute", "create", "--name", "bob-elsewhere", "-w", "other-ws")
	refused(t, env, "bob", "compute", "create", "--name", "bob-elsewhere", "-w", "bob-new-ws")
	if ws := mustRun(t, s.env, "workspace", "list", "-o", "json"); strings.Contains(ws, "bob-new-ws") {
		t.Errorf("bob's refused write created the workspace bob-new-ws:\n%s", ws)
	}
	// A change that fails (not refused) is audited as failed (see audit).
	if _, stderr, code := run(t, env, "compute", "create", "--name", "bob-bad-size", "--size", "Standard_NOPE99"); code != 1 || strings.Contains(stderr, "may not") {
		t.Errorf("compute create with an unknown size as bob: exit code %d, stderr %q; want 1 and not a refusal", code, stderr)
	}

	refused(t, env, "bob", "role", "assign", "--user", "bob", "--role", "Owner")
	refused(t, env, "bob", "role", "assign", "--user", "alice", "--role", "Contributor")
	wantStatus(t, s, "bob", f.bob, http.StatusForbidden,
		httpCase{"POST", wsAPI + "/roleassignments", `{"principal": "user:bob", "role": "Owner"}`},
		httpCase{"DELETE", wsAPI + "/roleassignments?principal=user:alice&role=Reader", ""},
		httpCase{"POST", wsAPI + "/computes/" + accessCluster + "/nodes/any/preempt", ""},
		httpCase{"POST", "/api/v1/users", `{"name": "mallory"}`},
		httpCase{"POST", "/api/v1/identities", `{"name": "bobs-identity"}`},
		httpCase{"POST", "/api/v1/roles", `{"name": "Everything", "actions": ["*"]}`},
	)
	for _, a := range runJSON[[]map[string]any](t, s.env, "role", "list-assignments", "-o", "json") {
		if p := jsonStr(a["principal_id"]); (p == "user:bob" && jsonStr(a["role"]) != "Contributor") || (p == "user:alice" && jsonStr(a["role"]) != readerRole) {
			t.Errorf("after bob's refused role assignments: %s holds %s", p, jsonStr(a["role"]))
		}
	}
}

// testAccessAnonymous: without a valid credential only the public routes
// answer.
func testAccessAnonymous(t *testing.T, f *accessFixture) {
	s := f.s
	routes := []httpCase{
		{"GET", wsAPI + "/computes", ""},
		{"GET", wsAPI + "/computes/" + accessCluster, ""},
		{"PUT", wsAPI + "/computes/anon-cluster", `{"type": "amlcompute"}`},
		{"PATCH", wsAPI + "/computes/" + accessCluster, `{"max_instances": 3}`},
		{"DELETE", wsAPI + "/computes/" + accessCluster, ""},
		{"GET", wsAPI + "/jobs", ""},
		{"POST", wsAPI + "/jobs", `{"command": "echo hi", "compute": "` + accessCluster + `"}`},
		{"GET", "/api/v1/users", ""},
		{"POST", "/api/v1/users", `{"name": "mallory"}`},
		{"GET", "/api/v1/users/alice/tokens", ""},
		{"GET", "/api/v1/audit", ""},
		{"GET", "/api/v1/roles", ""},
		{"GET", wsAPI + "/roleassignments", ""},
		{"POST", wsAPI + "/roleassignments", `{"principal": "user:alice", "role": "Owner"}`},
		{"GET", "/api/v1/whoami", ""},
		{"GET", "/api/v1/workspaces", ""},
	}
	for _, c := range routes {
		code, h, body := s.httpDo(t, c.method, c.path, "", []byte(c.body), nil)
		if code != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("anonymous %s: HTTP %d (WWW-Authenticate %q) %s; want 401 with a Bearer challenge", c, code, h.Get("WWW-Authenticate"), body)
		}
	}

	// Credentials that are not valid: an admin-looking API token, a JWT
	// signed by nobody, a JWT with a forged signature, a basic auth header.
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	fake := "shoal_" + base64.RawURLEncoding.EncodeToString(b)
	f.secret("fake admin-looking token", fake)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	claims := enc(fmt.Sprintf(`{"iss":%q,"sub":"identity:default.shared-cluster","aud":"shoal","exp":%d,"shoal_attempt":"att-x","shoal_submitter":"admin"}`, s.url, time.Now().Add(time.Hour).Unix()))
	unsigned := enc(`{"alg":"none","typ":"JWT"}`) + "." + claims + "." + enc("x")
	forged := enc(`{"alg":"RS256","kid":"forged","typ":"JWT"}`) + "." + claims + "." + enc(string(b))
	for label, tok := range map[string]string{"an admin-looking token": fake, "an unsigned JWT": unsigned, "a JWT with a forged signature": forged,
		"the admin token with a character changed": f.admin[:len(f.admin)-1] + flip(f.admin[len(f.admin)-1])} {
		for _, c := range []httpCase{routes[0], routes[2], routes[7]} {
			if code, body := c.do(t, s, tok); code != http.StatusUnauthorized {
				t.Errorf("%s with %s: HTTP %d %s; want 401", c, label, code, body)
			}
		}
	}
	if code, _, body := s.httpDo(t, "GET", wsAPI+"/computes", "", nil, map[string]string{"Authorization": "Basic " + enc("admin:"+f.admin)}); code != http.StatusUnauthorized {
		t.Errorf("GET computes with Basic auth: HTTP %d %s; want 401", code, body)
	}
	unauthenticated(t, f.as(fake), "an admin-looking token", "compute", "list")
	if _, _, code := run(t, s.env, "compute", "show", "-n", "anon-cluster"); code == 0 {
		t.Errorf("anon-cluster exists after anonymous PUTs")
	}

	// The public routes.
	if code, _, body := s.httpDo(t, "GET", "/healthz", "", nil, nil); code != http.StatusOK {
		t.Errorf("GET /healthz: HTTP %d %s; want 200", code, body)
	}
	code, _, body := s.httpDo(t, "GET", "/.well-known/openid-configuration", "", nil, nil)
	disc := map[string]any{}
	if err := json.Unmarshal(body, &disc); code != http.StatusOK || err != nil {
		t.Errorf("GET /.well-known/openid-configuration: HTTP %d %s (%v); want 200 with JSON", code, body, err)
	}
	if jsonStr(disc["issuer"]) != s.url {
		t.Errorf("discovery issuer %q, want the server URL %q", jsonStr(disc["issuer"]), s.url)
	}
	if jsonStr(disc["jwks_uri"]) != s.url+"/.well-known/jwks.json" {
		t.Errorf("discovery jwks_uri %q, want %q", jsonStr(disc["jwks_uri"]), s.url+"/.well-known/jwks.json")
	}
	if algs, _ := disc["id_token_signing_alg_values_supported"].([]any); !slices.Contains(algs, any("RS256")) {
		t.Errorf("discovery id_token_signing_alg_values_supported %v, want RS256", disc["id_token_signing_alg_values_supported"])
	}
	for _, k := range []string{"response_types_supported", "subject_types_supported", "claims_supported"} {
		if l, _ := disc[k].([]any); len(l) == 0 {
			t.Errorf("discovery has no %s: %s", k, body)
		}
	}
	code, _, body = s.httpDo(t, "GET", "/.well-known/jwks.json", "", nil, nil)
	var jwks struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(body, &jwks); code != http.StatusOK || err != nil || len(jwks.Keys) == 0 {
		t.Errorf("GET /.well-known/jwks.json: HTTP %d %s (%v); want 200 with at least one key", code, body, err)
	}
	for _, k := range jwks.Keys {
		for _, field := range []string{"kty", "kid", "n", "e", "alg", "use"} {
			if jsonStr(k[field]) == "" {
				t.Errorf("JWKS key without %s: %v", field, k)
			}
		}
		if jsonStr(k["kty"]) != "RSA" || jsonStr(k["alg"]) != "RS256" || jsonStr(k["use"]) != "sig" {
			t.Errorf("JWKS key %v: want kty RSA, alg RS256, use sig", k)
		}
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[private]; ok {
				t.Errorf("JWKS key %s publishes the private member %q", jsonStr(k["kid"]), private)
			}
		}
	}
}

// flip returns another base64url character than c.
func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// testAccessLogin: `shoal login` checks the token, then stores the URL and
// the token in the client config; a bad token writes nothing.
func testAccessLogin(t *testing.T, f *accessFixture) {
	s := f.s
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := childEnv(home)
	cfgPath := filepath.Join(home, ".config", "shoal", "config.yaml")

	// No config yet: the CLI says so.
	if _, _, code := run(t, env, "compute", "list"); code != 1 {
		t.Errorf("compute list with no client config: exit code %d, want 1", code)
	}
	_, stderr, code := run(t, env, "login", "--server", s.url, "--token", f.alice)
	if code != 0 || !strings.Contains(stderr, "alice") {
		t.Fatalf("login --server %s --token <alice's>: exit code %d, stderr %q; want 0 and a message naming alice", s.url, code, stderr)
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatalf("login wrote no client config: %v", err)
	}
	if !strings.Contains(string(b), s.url) || !strings.Contains(string(b), f.alice) || strings.Contains(string(b), "written_by_server") {
		t.Errorf("client config after login does not hold the server URL and alice's token (or claims the server wrote it):\n%s", b)
	}
	if st, err := os.Stat(cfgPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("client config after login: mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	computes := runJSON[[]map[string]any](t, env, "compute", "list", "-o", "json")
	if !slices.ContainsFunc(computes, func(c map[string]any) bool { return jsonStr(c["name"]) == accessCluster }) {
		t.Errorf("compute list after login does not hold %s: %v", accessCluster, computes)
	}
	refused(t, env, "alice", "compute", "create", "--name", "login-cluster")

	// A bad token: login fails and writes nothing, neither a new config nor
	// over an existing one.
	for label, tok := range map[string]string{"a token that is not valid": "shoal_" + strings.Repeat("x", 43), "a revoked token": ""} {
		if tok == "" {
			id, tk := f.createToken(t, s.env, "alice", "revoked-before-login")
			mustRun(t, s.env, "token", "revoke", "--id", id, "-o", "none")
			tok = tk
		}
		fresh := filepath.Join(t.TempDir(), "home")
		if err := os.MkdirAll(fresh, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := run(t, childEnv(fresh), "login", "--server", s.url, "--token", tok); code != 1 {
			t.Errorf("login with %s: exit code %d (stderr %q), want 1", label, code, stderr)
		}
		if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("login with %s left files in a fresh HOME: %v", label, names)
		}
		if _, stderr, code := run(t, env, "login", "--server", s.url, "--token", tok); code != 1 {
			t.Errorf("login with %s over a good config: exit code %d (stderr %q), want 1", label, code, stderr)
		}
		if after, _ := os.ReadFile(cfgPath); string(after) != string(b) {
			t.Errorf("a failed login (%s) changed the client config:\nbefore:\n%s\nafter:\n%s", label, b, after)
		}
	}
	// A server that is not there: nothing written either.
	fresh := filepath.Join(t.TempDir(), "home")
	if _, _, code := run(t, childEnv(fresh), "login", "--server", "http://"+freeAddr(t), "--token", f.alice); code != 1 {
		t.Errorf("login to a server that is not running: exit code %d, want 1", code)
	}
	if _, err := os.Stat(filepath.Join(fresh, ".config", "shoal", "config.yaml")); err == nil {
		t.Errorf("login to a server that is not running wrote a client config")
	}

	// The token on standard input, as the help says.
	stdinHome := filepath.Join(t.TempDir(), "home")
	if _, stderr, code := runStdin(t, childEnv(stdinHome), f.bob+"\n", "login", "--server", s.url); code != 0 {
		t.Errorf("login with the token on standard input: exit code %d, stderr %q", code, stderr)
	} else if list := runJSON[[]map[string]any](t, childEnv(stdinHome), "compute", "list", "-o", "json"); len(list) == 0 {
		t.Errorf("compute list after login (as bob) with the token on standard input is empty")
	}
}

// testAccessRevocation: a revoked token, and every token of a disabled
// user, fail at once; enabling the user brings back the tokens that were
// not revoked.
func testAccessRevocation(t *testing.T, f *accessFixture) {
	s := f.s
	tempID, temp := f.createToken(t, s.env, "alice", "temp")
	if _, stderr, code := run(t, f.as(temp), "compute", "list", "-o", "none"); code != 0 {
		t.Fatalf("compute list with a new token: exit code %d, stderr %q", code, stderr)
	}
	list := runJSON[[]map[string]any](t, s.env, "token", "list", "--user", "alice", "-o", "json")
	if !slices.ContainsFunc(list, func(m map[string]any) bool { return jsonStr(m["id"]) == tempID && m["revoked"] == false }) {
		t.Errorf("token list --user alice does not show %s unrevoked: %v", tempID, list)
	}
	if out := runJSON[map[string]any](t, s.env, "token", "revoke", "--id", tempID, "-o", "json"); out["revoked"] != true {
		t.Errorf("token revoke --id %s printed %v, want revoked: true", tempID, out)
	}
	unauthenticated(t, f.as(temp), "a revoked token", "compute", "list")
	wantStatus(t, s, "a revoked token", temp, http.StatusUnauthorized, httpCase{"GET", wsAPI + "/computes", ""}, httpCase{"GET", "/api/v1/whoami", ""})
	wantStatus(t, s, "alice's other token", f.alice, http.StatusOK, httpCase{"GET", wsAPI + "/computes", ""})

	// Self-service: alice makes and revokes her own token, but not bob's;
	// her 30-day token cannot make one that outlives it.
	if _, stderr, code := run(t, f.as(f.alice), "token", "create", "--user", "alice", "--name", "forever"); code != 1 || !strings.Contains(stderr, "expires_in") {
		t.Errorf("alice's 30-day token making a token without expiry: exit code %d, stderr %q; want 1 naming expires_in", code, stderr)
	}
	selfID, self := f.createToken(t, f.as(f.alice), "alice", "self-made", "--expires-in", "1d")
	wantStatus(t, s, "alice's self-made token", self, http.StatusOK, httpCase{"GET", wsAPI + "/computes", ""})
	mustRun(t, f.as(f.alice), "token", "revoke", "--id", selfID, "-o", "none")
	wantStatus(t, s, "alice's self-revoked token", self, http.StatusUnauthorized, httpCase{"GET", wsAPI + "/computes", ""})
	bobTokens := runJSON[[]map[string]any](t, s.env, "token", "list", "--user", "bob", "-o", "json")
	if len(bobTokens) == 0 {
		t.Fatalf("token list --user bob is empty")
	}
	bobID := jsonStr(bobTokens[0]["id"])
	if _, _, code := run(t, f.as(f.alice), "token", "revoke", "--id", bobID); code != 1 {
		t.Errorf("alice revoking bob's token %s: exit code %d, want 1", bobID, code)
	}
	if _, _, code := run(t, f.as(f.alice), "token", "create", "--user", "bob", "--name", "stolen"); code != 1 {
		t.Errorf("alice creating a token for bob: exit code %d, want 1", code)
	}
	if _, _, code := run(t, f.as(f.alice), "token", "list", "--user", "bob"); code != 1 {
		t.Errorf("alice listing bob's tokens: exit code %d, want 1", code)
	}
	wantStatus(t, s, "bob", f.bob, http.StatusOK, httpCase{"GET", wsAPI + "/computes", ""})

	// Disabling a user stops all her tokens at once.
	_, second := f.createToken(t, s.env, "alice", "second")
	wantStatus(t, s, "alice's second token", second, http.StatusOK, httpCase{"GET", wsAPI + "/computes", ""})
	if u := runJSON[map[string]any](t, s.env, "user", "disable", "--name", "alice", "-o", "json"); u["disabled"] != true {
		t.Errorf("user disable --name alice printed %v, want disabled: true", u)
	}
	for label, tok := range map[string]string{"alice's laptop token": f.alice, "alice's second token": second} {
		unauthenticated(t, f.as(tok), label+" (alice disabled)", "compute", "list")
		wantStatus(t, s, label+" (alice disabled)", tok, http.StatusUnauthorized, httpCase{"GET", wsAPI + "/computes", ""}, httpCase{"GET", "/api/v1/users/alice", ""})
	}
	if _, _, code := run(t, s.env, "token", "create", "--user", "alice", "--name", "while-disabled"); code != 1 {
		t.Errorf("token create for a disabled user: exit code %d, want 1", code)
	}
	if u := runJSON[map[string]any](t, s.env, "user", "show", "--name", "alice", "-o", "json"); u["disabled"] != true {
		t.Errorf("user show alice while disabled: %v", u)
	}
	if u := runJSON[map[string]any](t, s.env, "user", "enable", "--name", "alice", "-o", "json"); u["disabled"] != false {
		t.Errorf("user enable --name alice printed %v, want disabled: false", u)
	}
	for label, tok := range map[string]string{"alice's laptop token": f.alice, "alice's second token": second} {
		if _, stderr, code := run(t, f.as(tok), "compute", "list", "-o", "none"); code != 0 {
			t.Errorf("compute list with %s after user enable: exit code %d, stderr %q", label, code, stderr)
		}
	}
	wantStatus(t, s, "the revoked token after user enable", temp, http.StatusUnauthorized, httpCase{"GET", wsAPI + "/computes", ""})

	// Removing a role takes effect at once too.
	mustRun(t, s.env, "role", "unassign", "--user", "alice", "--role", readerRole)
	refused(t, f.as(f.alice), "alice", "compute", "list")
	mustRun(t, s.env, "role", "assign", "--user", "alice", "--role", readerRole, "-o", "none")
	if _, stderr, code := run(t, f.as(f.alice), "compute", "list", "-o", "none"); code != 0 {
		t.Errorf("compute list as alice after her role was given back: exit code %d, stderr %q", code, stderr)
	}

	// Expiry: --expires-in 30d is 30 days; a token that expired is refused.
	for _, tok := range runJSON[[]map[string]any](t, s.env, "token", "list", "--user", "alice", "-o", "json") {
		if jsonStr(tok["name"]) != "laptop" {
			continue
		}
		exp, err := time.Parse(time.RFC3339Nano, jsonStr(tok["expires_on"]))
		if d := time.Until(exp); err != nil || d < 29*24*time.Hour || d > 31*24*time.Hour {
			t.Errorf("alice's laptop token (--expires-in 30d) expires_on %q (%v), want about 30 days from now", jsonStr(tok["expires_on"]), err)
		}
	}
	before := time.Now()
	_, short := f.createToken(t, s.env, "alice", "short-lived", "--expires-in", "2s")
	after := time.Now() // the server made the token between before and after
	if code, body := (httpCase{"GET", wsAPI + "/computes", ""}).do(t, s, short); code != http.StatusOK && time.Since(before) < 2*time.Second {
		t.Errorf("a token expiring in 2 s, at once: HTTP %d %s; want 200", code, body)
	}
	time.Sleep(time.Until(after.Add(2*time.Second + 100*time.Millisecond)))
	wantStatus(t, s, "an expired token", short, http.StatusUnauthorized, httpCase{"GET", wsAPI + "/computes", ""})
}

// probeResult is what a run of testdata/access/probe-job.yml left.
type probeResult struct {
	job     string
	attempt string
	res     map[string]string // result.env
	token   string            // the token the job got from its MSI endpoint
	msi     map[string]any    // the endpoint's answer
	dir     string            // the downloaded result folder
}

// runProbe submits the probe job with env (whose token decides the
// submitter) on compute, waits until it completed and reads its result.
func runProbe(t *testing.T, f *accessFixture, env []string, compute string, sets ...string) probeResult {
	t.Helper()
	args := []string{"job", "create", "-f", accessFile(t, "probe-job.yml"), "--compute", compute, "-o", "json",
		"--set", "environment_variables.PROBE_API=" + f.s.url}
	for _, s := range sets {
		args = append(args, "--set", "environment_variables."+s)
	}
	j := runJSON[jobView](t, env, args...)
	waitJob(t, f.s, j.Name, 90*time.Second, "Completed")
	p := probeResult{job: j.Name}
	if list := listAttempts(t, f.s, j.Name); len(list) > 0 {
		p.attempt = list[len(list)-1].ID
	}
	p.dir = filepath.Join(downloadJob(t, f.s, j.Name), "result")
	if _, err := os.Stat(filepath.Join(p.dir, "result.env")); err != nil {
		t.Fatalf("probe job %s left no result.env (%v); its log:\n%s", j.Name, err, jobLog(t, f.s, j.Name))
	}
	p.res = parseEnvFile(t, filepath.Join(p.dir, "result.env"))
	t.Logf("probe job %s (attempt %s) on %s: %v", j.Name, p.attempt, compute, p.res)
	if b, err := os.ReadFile(filepath.Join(p.dir, "token.txt")); err == nil {
		p.token = string(b)
		f.secret("workload token of "+j.Name, p.token)
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "msi_secret.txt")); err == nil {
		f.secret("MSI secret of "+j.Name, string(b))
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "msi.json")); err == nil {
		_ = json.Unmarshal(b, &p.msi)
	}
	return p
}

// body returns what the probe saved of a step's answer.
func (p probeResult) body(step string) string {
	b, _ := os.ReadFile(filepath.Join(p.dir, step+".json"))
	return strings.TrimSpace(string(b))
}

// want requires the probe's steps to have got the statuses.
func (p probeResult) want(t *testing.T, steps map[string]int) {
	t.Helper()
	for _, step := range slices.Sorted(maps.Keys(steps)) {
		if got := p.res[step]; got != strconv.Itoa(steps[step]) {
			t.Errorf("job %s, step %s: HTTP %q %s; want %d", p.job, step, got, p.body(step), steps[step])
		}
	}
}

// afterEnd requires the probe's saved token to be refused now that its
// attempt ended.
func (p probeResult) afterEnd(t *testing.T, s *server) {
	t.Helper()
	if p.token == "" {
		t.Errorf("job %s saved no token", p.job)
		return
	}
	for _, c := range []httpCase{{"GET", wsAPI + "/computes", ""}, {"GET", wsAPI + "/jobs/" + p.job, ""}} {
		if code, body := c.do(t, s, p.token); code != http.StatusUnauthorized {
			t.Errorf("%s with the workload token of %s after the job completed: HTTP %d %s; want 401", c, p.job, code, body)
		}
	}
}

// testAccessWorkload: jobs on computes with managed identities get tokens
// from their MSI endpoint that act with the identity's roles, never more
// than the submitter's, and only while their attempt runs.
func testAccessWorkload(t *testing.T, f *accessFixture) {
	s := f.s
	// The managed identity probe (testdata/access/probe/probe.sh) calls
	// the MSI endpoint with curl.
	testenv.Command(t, "curl", "curl (the managed identity probe)", "apt-get install curl")
	// msi-reader: system-assigned identity with Reader; msi-contrib: with
	// Contributor; msi-trainer: the user-assigned identity trainer, with
	// Contributor; no-identity: none.
	mustRun(t, s.env, "compute", "create", "-f", accessFile(t, "compute-system-identity.yml"), "-o", "none")
	mustRun(t, s.env, "role", "assign", "--compute", "msi-reader", "--role", readerRole, "-o", "none")
	mustRun(t, s.env, "compute", "create", "-f", accessVariant(t, "compute-system-identity.yml", "msi-reader", "msi-contrib"), "-o", "none")
	mustRun(t, s.env, "role", "assign", "--compute", "msi-contrib", "--role", "Contributor", "-o", "none")
	mustRun(t, s.env, "identity", "create", "--name", "trainer", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--identity", "trainer", "--role", "Contributor", "-o", "none")
	mustRun(t, s.env, "compute", "create", "-f", accessFile(t, "compute-user-identity.yml"), "-o", "none")
	createCluster(t, s, "no-identity", "--max-instances", "1")

	ids := map[string]map[string]any{}
	for _, id := range runJSON[[]map[string]any](t, s.env, "identity", "list", "-o", "json") {
		ids[jsonStr(id["name"])] = id
	}
	for name, system := range map[string]bool{"default.msi-reader": true, "default.msi-contrib": true, "trainer": false} {
		if id, ok := ids[name]; !ok || id["system_assigned"] != system || jsonStr(id["client_id"]) == "" {
			t.Errorf("identity list: %s is %v; want it with a client_id and system_assigned %v (all: %v)", name, id, system, ids)
		}
	}
	if c := show(t, s, "msi-reader"); jsonStr(mapField(c, "identity", "principal_id")) != "identity:default.msi-reader" {
		t.Errorf("compute show msi-reader: identity %v, want principal_id identity:default.msi-reader", c["identity"])
	}
	// A Reader (and no-one but an admin) may not grant a role to an
	// identity either.
	refused(t, f.as(f.rita), "rita", "role", "assign", "--compute", "msi-reader", "--role", "Owner")

	t.Run("system-assigned reader, submitted by admin", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, f, s.env, "msi-reader", "PROBE_PUT_COMPUTE=wl-reader-made")
		if p.res["has_MSI_SECRET"] != "yes" || p.res["has_IDENTITY_ENDPOINT"] != "yes" || p.res["has_IDENTITY_HEADER"] != "yes" || p.res["msi_endpoint"] == "" {
			t.Errorf("job %s on a compute with a system-assigned identity: %v; want MSI_ENDPOINT, MSI_SECRET, IDENTITY_ENDPOINT, IDENTITY_HEADER", p.job, p.res)
		}
		if want := jsonStr(ids["default.msi-reader"]["client_id"]); p.res["default_identity_client_id"] != want {
			t.Errorf("DEFAULT_IDENTITY_CLIENT_ID %q, want the identity's client_id %q", p.res["default_identity_client_id"], want)
		}
		for _, k := range []string{"access_token", "expires_on", "resource", "token_type"} {
			if jsonStr(p.msi[k]) == "" {
				t.Errorf("the MSI endpoint's answer has no %s: %s", k, p.body("msi"))
			}
		}
		if jsonStr(p.msi["resource"]) != "shoal" || !strings.EqualFold(jsonStr(p.msi["token_type"]), "Bearer") {
			t.Errorf("the MSI endpoint's answer: resource %q, token_type %q; want shoal, Bearer", jsonStr(p.msi["resource"]), jsonStr(p.msi["token_type"]))
		}
		if exp, err := strconv.ParseInt(jsonStr(p.msi["expires_on"]), 10, 64); err != nil || time.Unix(exp, 0).Before(time.Now()) || time.Unix(exp, 0).After(time.Now().Add(2*time.Hour)) {
			t.Errorf("expires_on %q: want seconds since the epoch, in the next hour or two", jsonStr(p.msi["expires_on"]))
		}
		p.want(t, map[string]int{
			"msi": 200, "msi_no_secret": 401, "msi_wrong_secret": 401, "identity_endpoint": 200,
			"msi_server_url": 200, "msi_other_audience": 200,
			"get_computes": 200, "get_computes_app_service": 200, "get_computes_server_url": 200,
			"get_computes_other_audience": 401,
			"get_own_job":                 200,
			"list_users":                  403,
			"put_compute":                 403,
		})
		if _, _, code := run(t, s.env, "compute", "show", "-n", "wl-reader-made"); code == 0 {
			t.Errorf("the Reader identity's refused PUT created wl-reader-made")
		}
		p.afterEnd(t, s)
		f.mu.Lock()
		f.deniedWorkloadWrite, f.deniedWorkloadIdentity = p.attempt, "identity:default.msi-reader"
		f.mu.Unlock()
	})

	t.Run("system-assigned reader, submitted by a reader", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, f, f.as(f.rita), "msi-reader", "PROBE_PUT_COMPUTE=wl-rita-reader")
		if j := runJSON[map[string]any](t, s.env, "job", "show", "-n", p.job, "-o", "json"); jsonStr(j["created_by_principal"]) != "user:rita" {
			t.Errorf("job %s: created_by_principal %q, want user:rita", p.job, jsonStr(j["created_by_principal"]))
		}
		p.want(t, map[string]int{"msi": 200, "get_computes": 200, "get_own_job": 200, "put_compute": 403})
		p.afterEnd(t, s)
	})

	t.Run("no identity", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, f, s.env, "no-identity")
		for _, k := range []string{"MSI_SECRET", "IDENTITY_ENDPOINT", "IDENTITY_HEADER", "DEFAULT_IDENTITY_CLIENT_ID"} {
			if p.res["has_"+k] != "no" {
				t.Errorf("job %s on a compute without identity has %s set", p.job, k)
			}
		}
		if p.res["msi_endpoint"] != "" {
			t.Errorf("job %s on a compute without identity has MSI_ENDPOINT=%q, want it empty", p.job, p.res["msi_endpoint"])
		}
	})

	t.Run("contributor identity, submitted by admin", func(t *testing.T) {
		t.Parallel()
		// The positive control of the next case: the same identity, with a
		// submitter who may, creates a compute.
		p := runProbe(t, f, s.env, "msi-contrib", "PROBE_PUT_COMPUTE=wl-admin-made")
		p.want(t, map[string]int{"msi": 200, "get_computes": 200, "put_compute": 201})
		if c := show(t, s, "wl-admin-made"); jsonStr(c["created_by"]) == "" {
			t.Errorf("wl-admin-made: no created_by: %v", c)
		} else {
			t.Logf("wl-admin-made was created by %q", jsonStr(c["created_by"]))
		}
		p.afterEnd(t, s)
	})

	t.Run("contributor identity, submitted by a reader", func(t *testing.T) {
		t.Parallel()
		// The workload never gets more than its submitter: rita may not
		// write computes, so her job's Contributor identity may not either.
		// She may submit jobs, so it may; the follow-up job is still hers.
		p := runProbe(t, f, f.as(f.rita), "msi-contrib", "PROBE_PUT_COMPUTE=wl-rita-made", "PROBE_SUBMIT_COMPUTE=no-identity")
		p.want(t, map[string]int{"msi": 200, "get_computes": 200, "put_compute": 403, "submit_job": 201})
		if b := p.body("put_compute"); !strings.Contains(b, "submitter") {
			t.Errorf("the refusal of the bound workload's PUT does not name the submitter bound: %s", b)
		}
		if _, _, code := run(t, s.env, "compute", "show", "-n", "wl-rita-made"); code == 0 {
			t.Errorf("the workload of rita's job created wl-rita-made: a workload got more rights than its submitter")
		}
		var follow map[string]any
		_ = json.Unmarshal([]byte(p.body("submit_job")), &follow)
		if name := jsonStr(follow["name"]); name != "" {
			if got := jsonStr(follow["created_by_principal"]); got != "user:rita" {
				t.Errorf("the follow-up job %s submitted by rita's workload: created_by_principal %q, want user:rita (else its own workload escapes the bound)", name, got)
			}
			waitJob(t, s, name, 60*time.Second, "Completed")
		}
		p.afterEnd(t, s)
	})

	t.Run("user-assigned identity, submitted by admin", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, f, s.env, "msi-trainer", "PROBE_SUBMIT_COMPUTE=msi-trainer")
		if want := jsonStr(ids["trainer"]["client_id"]); p.res["default_identity_client_id"] != want {
			t.Errorf("DEFAULT_IDENTITY_CLIENT_ID %q, want trainer's client_id %q", p.res["default_identity_client_id"], want)
		}
		if got := jsonStr(p.msi["client_id"]); got != "" && got != jsonStr(ids["trainer"]["client_id"]) {
			t.Errorf("the MSI endpoint's token is for client_id %q, want trainer's %q", got, jsonStr(ids["trainer"]["client_id"]))
		}
		p.want(t, map[string]int{"msi": 200, "get_computes": 200, "get_own_job": 200, "submit_job": 201})
		var follow map[string]any
		_ = json.Unmarshal([]byte(p.body("submit_job")), &follow)
		name := jsonStr(follow["name"])
		if name == "" {
			t.Fatalf("the follow-up job's answer has no name: %s", p.body("submit_job"))
		}
		if got := jsonStr(follow["created_by_principal"]); got != "admin" {
			t.Errorf("follow-up job %s: created_by_principal %q, want admin (the original submitter)", name, got)
		}
		j := waitJob(t, s, name, 60*time.Second, "Completed")
		if log := jobLog(t, s, name); !strings.Contains(log, "hi") {
			t.Errorf("follow-up job %s (%s) did not print hi:\n%s", name, j, log)
		}
		p.afterEnd(t, s)
	})
}

// mapField reads m[a][b].
func mapField(m map[string]any, a, b string) any {
	inner, _ := m[a].(map[string]any)
	return inner[b]
}

// testAccessAgentRoutes: the agent routes take a node credential (or, for
// join, a join token that works once) and nothing else.
func testAccessAgentRoutes(t *testing.T, f *accessFixture) {
	s := f.s
	creds := map[string]string{"no token": "", "the admin token": f.admin, "alice's token": f.alice}
	f.mu.Lock()
	for label, v := range f.secrets {
		if strings.HasPrefix(label, "workload token of ") {
			creds["a workload token"] = v
			break
		}
	}
	f.mu.Unlock()
	for label, tok := range creds {
		for _, c := range []httpCase{
			{"POST", "/agent/v1/sync", `{}`},
			{"POST", "/agent/v1/attempts/att-x/ranks/0/token", `{"resource": "shoal"}`},
			{"GET", "/agent/v1/artifacts/x", ""},
		} {
			if code, body := c.do(t, s, tok); code != http.StatusUnauthorized {
				t.Errorf("%s with %s: HTTP %d %s; want 401", c, label, code, body)
			}
		}
	}

	// A join token works once. The agent got its own in its environment
	// (SHOAL_JOIN_TOKEN) and has used it: a second use is refused.
	agents := agentProcs(s.nodesDir)
	if len(agents) == 0 {
		t.Fatal("no agent is running, though the jobs above left idle nodes: cannot read a used join token")
	}
	for node, pid := range agents {
		p, ok := readProc(pid)
		jt, found := p.envValue("SHOAL_JOIN_TOKEN")
		if !ok || !found || jt == "" {
			t.Logf("agent %s (pid %d): no join token in its environment", node, pid)
			continue
		}
		f.secret("join token of "+node, jt)
		body := fmt.Sprintf(`{"node_id": %q, "address": "127.0.0.1", "port": 1}`, node)
		if code, _, resp := s.httpDo(t, "POST", "/agent/v1/join", jt, []byte(body), nil); code != http.StatusUnauthorized {
			t.Errorf("second use of node %s's join token: HTTP %d %s; want 401", node, code, resp)
		}
		if code, _, resp := s.httpDo(t, "POST", "/agent/v1/join", f.admin, []byte(body), nil); code != http.StatusUnauthorized {
			t.Errorf("join as node %s with the admin token: HTTP %d %s; want 401", node, code, resp)
		}
		return
	}
	t.Fatal("no agent had its join token in its environment")
}

// auditRecord is an entry of `shoal audit list -o json`.
type auditRecord struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal_id"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Outcome   string    `json:"outcome"`
	Detail    string    `json:"detail"`
}

func (r auditRecord) String() string {
	return fmt.Sprintf("%s %s %s %s %s %q", r.Time.Format(time.RFC3339), r.Principal, r.Action, r.Target, r.Outcome, r.Detail)
}

// testAccessAudit: what the subtests before did is in the audit log.
func testAccessAudit(t *testing.T, f *accessFixture) {
	s := f.s
	all := runJSON[[]auditRecord](t, s.env, "audit", "list", "-o", "json")
	dump := func(list []auditRecord) string {
		var b strings.Builder
		for _, r := range list {
			b.WriteString("\n  " + r.String())
		}
		return b.String()
	}
	find := func(what string, match func(r auditRecord) bool) *auditRecord {
		t.Helper()
		for i := range all {
			if match(all[i]) {
				return &all[i]
			}
		}
		t.Errorf("the audit log has no record of %s", what)
		return nil
	}
	find("admin creating a user", func(r auditRecord) bool {
		return r.Principal == "admin" && r.Action == "users/write" && r.Outcome == "succeeded" && isUserCreate(r)
	})
	find("admin creating the user alice, naming her", func(r auditRecord) bool {
		return r.Principal == "admin" && r.Action == "users/write" && r.Outcome == "succeeded" && isUserCreate(r) && strings.Contains(r.Target+" "+r.Detail, "alice")
	})
	find("admin assigning a role", func(r auditRecord) bool {
		return r.Principal == "admin" && r.Action == "roles/write" && r.Outcome == "succeeded"
	})
	find("admin assigning alice her role, naming her", func(r auditRecord) bool {
		return r.Principal == "admin" && r.Action == "roles/write" && r.Outcome == "succeeded" && strings.Contains(r.Target+" "+r.Detail, "alice")
	})
	find("alice refused computes/write", func(r auditRecord) bool {
		return r.Principal == "user:alice" && r.Action == "computes/write" && r.Outcome == "denied"
	})
	find("bob refused roles/write", func(r auditRecord) bool {
		return r.Principal == "user:bob" && r.Action == "roles/write" && r.Outcome == "denied"
	})
	find("bob creating a compute", func(r auditRecord) bool {
		return r.Principal == "user:bob" && r.Action == "computes/write" && r.Outcome == "succeeded" && strings.Contains(r.Target, "computes/bob-cluster")
	})
	find("bob's failed change (an unknown size) as failed", func(r auditRecord) bool {
		return r.Principal == "user:bob" && r.Action == "computes/write" && r.Outcome == "failed" && strings.Contains(r.Target, "bob-bad-size")
	})
	find("a token revoked", func(r auditRecord) bool {
		return r.Action == "tokens/revoke/action" && r.Outcome == "succeeded"
	})
	find("an anonymous request refused", func(r auditRecord) bool {
		return r.Principal == "anonymous" && r.Outcome == "denied"
	})
	find("alice logging in", func(r auditRecord) bool {
		return r.Principal == "user:alice" && r.Action == "login" && r.Outcome == "succeeded"
	})
	find("a request with a disabled user's token refused", func(r auditRecord) bool {
		return r.Principal == "anonymous" && r.Outcome == "denied" && strings.Contains(r.Detail, "disabled")
	})
	f.mu.Lock()
	attempt, identity := f.deniedWorkloadWrite, f.deniedWorkloadIdentity
	f.mu.Unlock()
	if attempt == "" {
		t.Errorf("the workload subtest recorded no refused workload write to look for")
	} else {
		find(identity+" refused computes/write, naming attempt "+attempt, func(r auditRecord) bool {
			return r.Principal == identity && r.Action == "computes/write" && r.Outcome == "denied" && strings.Contains(r.Detail, attempt)
		})
		find(identity+" refused users/read (its list of users)", func(r auditRecord) bool {
			return r.Principal == identity && r.Action == "users/read" && r.Outcome == "denied"
		})
	}
	find("the workload of rita's job refused computes/write by the submitter bound", func(r auditRecord) bool {
		return r.Principal == "identity:default.msi-contrib" && r.Action == "computes/write" && r.Outcome == "denied" && strings.Contains(r.Detail, "user:rita")
	})
	find("the workload of admin's job creating a compute", func(r auditRecord) bool {
		return r.Principal == "identity:default.msi-contrib" && r.Action == "computes/write" && r.Outcome == "succeeded" && strings.Contains(r.Target, "wl-admin-made")
	})
	if t.Failed() {
		t.Logf("audit log:%s", dump(all))
	}

	// Filters.
	alice := runJSON[[]auditRecord](t, s.env, "audit", "list", "--principal", "user:alice", "-o", "json")
	if len(alice) == 0 {
		t.Errorf("audit list --principal user:alice is empty")
	}
	for _, r := range alice {
		if r.Principal != "user:alice" {
			t.Errorf("audit list --principal user:alice holds %s", r)
		}
	}
	if n := countWhere(all, func(r auditRecord) bool { return r.Principal == "user:alice" }); n != len(alice) {
		t.Errorf("audit list --principal user:alice gives %d records, the full list %d of alice's", len(alice), n)
	}
	recent := runJSON[[]auditRecord](t, s.env, "audit", "list", "--since", "1h", "-o", "json")
	if len(recent) < len(all) {
		t.Errorf("audit list --since 1h gives %d records, want all %d (the test is younger than an hour)", len(recent), len(all))
	}
	for _, r := range recent {
		if time.Since(r.Time) > time.Hour+time.Minute {
			t.Errorf("audit list --since 1h holds an older record: %s", r)
		}
	}
	if none := runJSON[[]auditRecord](t, s.env, "audit", "list", "--since", time.Now().Add(time.Minute).UTC().Format(time.RFC3339), "-o", "json"); len(none) != 0 {
		t.Errorf("audit list --since <a minute from now> gives %d records, want 0:%s", len(none), dump(none))
	}
	target := runJSON[[]auditRecord](t, s.env, "audit", "list", "--target", "computes/bob-cluster", "-o", "json")
	if len(target) == 0 {
		// Say which spellings of the target do find bob's records.
		var found []string
		for _, v := range []string{"workspaces/default/computes/bob-cluster", "PUT workspaces/default/computes/bob-cluster", "PUT workspaces/default/computes"} {
			if l := runJSON[[]auditRecord](t, s.env, "audit", "list", "--target", v, "-o", "json"); len(l) > 0 {
				found = append(found, fmt.Sprintf("--target %q finds %d", v, len(l)))
			}
		}
		t.Errorf("audit list --target computes/bob-cluster is empty, though %d records' targets contain computes/bob-cluster (the help says it finds a resource and what is under it); %v",
			countWhere(all, func(r auditRecord) bool { return strings.Contains(r.Target, "computes/bob-cluster") }), found)
	}
	for _, r := range target {
		if !strings.Contains(r.Target, "computes/bob-cluster") {
			t.Errorf("audit list --target computes/bob-cluster holds %s", r)
		}
	}
	if _, _, code := run(t, s.env, "audit", "list", "--since", "yesterday"); code != 1 {
		t.Errorf("audit list --since yesterday: exit code %d, want 1", code)
	}
	// Only administrators read the audit log.
	if _, _, code := run(t, f.as(f.bob), "audit", "list"); code != 1 {
		t.Errorf("audit list as bob: exit code %d, want 1", code)
	}
}

// isUserCreate reports whether r records a POST to /api/v1/users (and not
// to a user's disable or enable).
// isUserCreate reports a user creation: the target is the users collection
// (disable and enable target users/<name>/disable and /enable).
func isUserCreate(r auditRecord) bool {
	return r.Target == "users"
}

func countWhere[T any](l []T, f func(T) bool) int {
	n := 0
	for _, v := range l {
		if f(v) {
			n++
		}
	}
	return n
}

// testAccessSecrets: no credential shows in the server's log, the agents'
// logs, or a response other than the one creating it.
func testAccessSecrets(t *testing.T, f *accessFixture) {
	s := f.s
	f.mu.Lock()
	secrets := maps.Clone(f.secrets)
	f.mu.Unlock()
	check := func(where, text string) {
		t.Helper()
		for label, v := range secrets {
			if v != "" && strings.Contains(text, v) {
				t.Errorf("%s holds %s", where, label)
			}
		}
	}
	check("the server log", s.log())
	logs, _ := filepath.Glob(filepath.Join(s.nodesDir, "*", "agent.log"))
	for _, p := range logs {
		b, _ := os.ReadFile(p)
		check(p, string(b))
	}
	for _, u := range []string{"alice", "bob", "rita"} {
		out := mustRun(t, s.env, "token", "list", "--user", u, "-o", "json")
		check("token list --user "+u, out)
		if strings.Contains(out, "shoal_") || strings.Contains(out, `"token"`) || strings.Contains(out, "hash") {
			t.Errorf("token list --user %s shows a token or its hash:\n%s", u, out)
		}
		list := decodeJSON[[]map[string]any](t, out)
		if len(list) == 0 {
			t.Errorf("token list --user %s is empty", u)
		}
	}
	for _, args := range [][]string{
		{"audit", "list", "-o", "json"},
		{"user", "list", "-o", "json"},
		{"user", "show", "--name", "alice", "-o", "json"},
		{"identity", "list", "-o", "json"},
		{"role", "list-assignments", "-o", "json"},
	} {
		check("shoal "+strings.Join(args, " "), mustRun(t, s.env, args...))
	}
	_, _, body := s.httpDo(t, "GET", "/api/v1/whoami", f.alice, nil, nil)
	check("GET /api/v1/whoami", string(body))
	t.Logf("checked %d credentials against the server log, %d agent logs and the responses", len(secrets), len(logs))
}

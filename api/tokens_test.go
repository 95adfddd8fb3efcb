package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// TestTokenCannotOutliveItsMaker: a token that expires cannot mint a
// token that lives longer (nor one that never expires), so a stolen
// short-lived token cannot be turned into a lasting one; a token without
// expiry may mint any allowed lifetime.
func TestTokenCannotOutliveItsMaker(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "POST", "/api/v1/users", `{"name":"bob"}`, http.StatusCreated)
	short := mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/tokens", `{"name":"short","expires_in":"1h"}`, http.StatusCreated).json(t)["token"].(string)
	forever := mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/tokens", `{"name":"forever"}`, http.StatusCreated).json(t)["token"].(string)

	for _, body := range []string{`{"name":"longer","expires_in":"2h"}`, `{"name":"never"}`} {
		r := send(t, e, short, "POST", "/api/v1/users/bob/tokens", body, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "expires_in") {
			t.Errorf("a 1h token minting %s: %s, want 400 naming expires_in", body, r)
		}
	}
	mustSend(t, e, short, "POST", "/api/v1/users/bob/tokens", `{"name":"shorter","expires_in":"30m"}`, http.StatusCreated)
	mustSend(t, e, forever, "POST", "/api/v1/users/bob/tokens", `{"name":"long","expires_in":"8760h"}`, http.StatusCreated)
	mustSend(t, e, forever, "POST", "/api/v1/users/bob/tokens", `{"name":"never"}`, http.StatusCreated)
}

// TestTokenNamesAreBounded: a token's name is 1 to 64 characters without
// control characters (it is printed in lists and the audit log).
func TestTokenNamesAreBounded(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "POST", "/api/v1/users", `{"name":"bob"}`, http.StatusCreated)
	for _, name := range []string{"", strings.Repeat("n", 65), `bad\u001b[2Jname`, `two\nlines`, `del\u007f`} {
		r := send(t, e, e.admin, "POST", "/api/v1/users/bob/tokens", `{"name":"`+name+`"}`, nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("token name %q: %s, want 400", name, r)
			continue
		}
		if e, _ := r.json(t)["error"].(map[string]any); e["target"] != "name" || e["code"] != core.EINVALID {
			t.Errorf("token name %q: error %v, want invalid naming target name", name, e)
		}
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/tokens", `{"name":"`+strings.Repeat("n", 64)+`"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/users/bob/tokens", `{"name":"laptop (work) – 2025"}`, http.StatusCreated)
}

// A service principal's secret never expires: an administrator's token
// that does expire (a studio session's) can neither make one nor reset
// one, and buys no lasting credential that way.
func TestServicePrincipalSecretNeedsALastingToken(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "POST", "/api/v1/users", `{"name":"root2","admin":true}`, http.StatusCreated)
	short := mustSend(t, e, e.admin, "POST", "/api/v1/users/root2/tokens", `{"name":"short","expires_in":"1h"}`, http.StatusCreated).json(t)["token"].(string)
	if r := send(t, e, short, "POST", "/api/v1/serviceprincipals", `{"name":"ci-bot"}`, nil); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "never expires") {
		t.Errorf("an expiring token made a service principal: %s", r)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"ci-bot"}`, http.StatusCreated)
	if r := send(t, e, short, "POST", "/api/v1/serviceprincipals/ci-bot/secret", ``, nil); r.status != http.StatusForbidden {
		t.Errorf("an expiring token reset a service principal's secret: %s", r)
	}
}

package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A registry's password goes in once and never comes out: not in the
// add's answer, the list, an error, the audit log or a log line of the
// server's API layer (debug included; the e2e test reads the whole
// server's log); a bad request is a 400 naming the field.
func TestRegistryPasswordNeverComesOut(t *testing.T) {
	e, logs := newLoggedEnv(t)
	const secret = "hunter2-registry-password"
	ws := "/api/v1/workspaces/default/registries"
	var seen strings.Builder
	add := mustSend(t, e, e.admin, "POST", ws, `{"server":"LocalHost:5000","username":"team","password":"`+secret+`","insecure":true}`, http.StatusCreated)
	seen.Write(add.body)
	if !strings.Contains(string(add.body), `"server":"localhost:5000"`) || !strings.Contains(string(add.body), `"insecure":true`) {
		t.Errorf("add answered %s", add.body)
	}
	// Added again with the same server: replaced, not doubled.
	seen.Write(mustSend(t, e, e.admin, "POST", ws, `{"server":"localhost:5000","username":"team","password":"`+secret+`"}`, http.StatusCreated).body)
	list := mustSend(t, e, e.admin, "GET", ws, "", http.StatusOK)
	seen.Write(list.body)
	if n := strings.Count(string(list.body), `"server"`); n != 1 || strings.Contains(string(list.body), "insecure") {
		t.Errorf("list %s: want one secure localhost:5000", list.body)
	}
	bad := send(t, e, e.admin, "POST", ws, `{"server":"http://localhost:5000","username":"team","password":"`+secret+`"}`, nil)
	seen.Write(bad.body)
	if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.body), `"target":"server"`) {
		t.Errorf("bad server: %s, want 400 naming server", bad)
	}
	seen.Write(mustSend(t, e, e.admin, "GET", "/api/v1/audit", "", http.StatusOK).body)
	mustSend(t, e, e.admin, "DELETE", ws+"/localhost:5000", "", http.StatusNoContent)
	seen.Write(mustSend(t, e, e.admin, "GET", ws, "", http.StatusOK).body)
	seen.Write(logs.Bytes())
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the password came out: %s", seen.String())
	}
}

package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

// A datastore's credentials go in once and never come out: not in the
// create's answer, show, list, an error, the audit log or a log line of
// the server's API layer (debug included); a Reader can neither create
// nor delete one; a bad document is a 400 naming the field.
func TestDatastoreSecretNeverComesOut(t *testing.T) {
	e, logs := newLoggedEnv(t)
	reader := addUser(t, e, "rita", identity.RoleReader)
	const secret = "hunter2-datastore-account-key"
	ws := "/api/v1/workspaces/default/datastores"
	doc := `{"name":"blob_example","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"` + secret + `"}}`
	var seen strings.Builder
	// A Reader may not create it, nor learn anything of the secret from
	// the refusal.
	denied := send(t, e, reader, "PUT", ws+"/blob_example", doc, nil)
	seen.Write(denied.body)
	if denied.status != http.StatusForbidden {
		t.Errorf("a Reader's create: %s, want 403", denied)
	}
	created := mustSend(t, e, e.admin, "PUT", ws+"/blob_example", doc, http.StatusCreated)
	seen.Write(created.body)
	if !strings.Contains(string(created.body), `"credentials_type":"account_key"`) || !strings.Contains(string(created.body), `"account_name":"acct"`) {
		t.Errorf("create answered %s", created.body)
	}
	// Again: replaced (200), not doubled.
	seen.Write(mustSend(t, e, e.admin, "PUT", ws+"/blob_example", doc, http.StatusOK).body)
	list := mustSend(t, e, reader, "GET", ws, "", http.StatusOK)
	seen.Write(list.body)
	for _, want := range []string{`"name":"blob_example"`, `"name":"workspaceblobstore"`, `"name":"workspaceartifactstore"`, `"is_default":true`} {
		if !strings.Contains(string(list.body), want) {
			t.Errorf("list %s: want %s", list.body, want)
		}
	}
	seen.Write(mustSend(t, e, reader, "GET", ws+"/blob_example", "", http.StatusOK).body)
	for _, bad := range []struct{ doc, target string }{
		{`{"type":"azure_blob","account_name":"acct","container_name":"data","endpoint":"http://127.0.0.1:10000/a","credentials":{"account_key":"` + secret + `"}}`, "endpoint"},
		{`{"type":"s3","bucket":"bkt","endpoint_url":"http://169.254.169.254","credentials":{"access_key_id":"a","secret_access_key":"` + secret + `"}}`, "endpoint_url"},
		{`{"type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"` + secret + `","sas_token":"` + secret + `"}}`, "credentials"},
		{`{"type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"key":"` + secret + `"}}`, "credentials.key"},
		{`{"name":"other","type":"nfs","path":"/mnt"}`, "name"},
	} {
		got := send(t, e, e.admin, "PUT", ws+"/bad", bad.doc, nil)
		seen.Write(got.body)
		if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), `"target":"`+bad.target+`"`) {
			t.Errorf("%s: %s, want 400 naming %s", bad.doc, got, bad.target)
		}
	}
	if got := send(t, e, reader, "DELETE", ws+"/blob_example", "", nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's delete: %s", got)
	}
	if got := send(t, e, e.admin, "DELETE", ws+"/workspaceblobstore", "", nil); got.status != http.StatusBadRequest || !strings.Contains(string(got.body), "built-in") {
		t.Errorf("delete of a built-in: %s", got)
	}
	seen.Write(mustSend(t, e, e.admin, "GET", "/api/v1/audit", "", http.StatusOK).body)
	mustSend(t, e, e.admin, "DELETE", ws+"/blob_example", "", http.StatusNoContent)
	mustSend(t, e, e.admin, "GET", ws+"/blob_example", "", http.StatusNotFound)
	seen.Write(logs.Bytes())
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the credential came out: %s", seen.String())
	}
}

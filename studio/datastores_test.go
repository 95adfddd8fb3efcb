package studio_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// The datastores pages list the built-ins and the workspace's own and
// show one with the kind of credential it keeps, never the credential,
// to a Reader; a user without a role in the workspace is refused.
func TestDatastorePages(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	rita := userWithRole(t, svc, admin, "rita", "Reader")
	const secret = "studio-never-shows-this-key"
	spec, err := asset.DecodeDatastore([]byte(`{"name":"blob_example","type":"azure_blob","account_name":"acct","container_name":"data","description":"team data","credentials":{"account_key":"` + secret + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	// This server has no secrets key: the row is written as a sealing
	// server would write it, and the page must show neither the value
	// nor its sealed form.
	d := spec.Datastore
	d.Workspace, d.SealedCredentials = core.DefaultWorkspace, "sealed:v1:"+secret
	if err := svc.Store().Update(admin, func(tx store.Tx) error { return tx.PutDatastore(&d) }); err != nil {
		t.Fatal(err)
	}
	status, body := page(t, ts, "/datastores", rita)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, body)
	}
	for _, want := range []string{`href="/datastores/blob_example"`, "workspaceblobstore", "workspaceartifactstore", "account_key", `href="/datastores" aria-current="page"`} {
		if !strings.Contains(body, want) {
			t.Errorf("list misses %s", want)
		}
	}
	status, detail := page(t, ts, "/datastores/blob_example", rita)
	if status != http.StatusOK {
		t.Fatalf("show: %d %s", status, detail)
	}
	for _, want := range []string{"team data", "https://acct.blob.core.windows.net", "account_key (never shown)", "azureml://datastores/blob_example/paths/"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail misses %s", want)
		}
	}
	if strings.Contains(body+detail, secret) {
		t.Error("a page shows the credential")
	}
	if status, _ := page(t, ts, "/datastores/nope", rita); status != http.StatusNotFound {
		t.Errorf("unknown datastore: %d", status)
	}
	nobody := userWithRole(t, svc, admin, "nora", "Reader")
	if err := svc.UnassignRole(admin, "user:nora", "Reader", core.DefaultWorkspace); err != nil {
		t.Fatal(err)
	}
	if status, body := page(t, ts, "/datastores", nobody); status != http.StatusForbidden || strings.Contains(body, "blob_example") {
		t.Errorf("a user without a role: %d", status)
	}
}

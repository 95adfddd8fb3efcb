package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

const armDatastores = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/datastores"

// TestARMDatastores: Azure's DatastoreResource routes create, show, list
// (isDefault, pages) and delete what `shoal datastore` sees; the secret
// goes in with the PUT and comes out only of listSecrets, to a caller
// who may write datastores; a Reader gets 403 there; a hostile endpoint
// is refused naming the property.
func TestARMDatastores(t *testing.T) {
	e := newTestEnv(t)
	reader := addUser(t, e, "rita", identity.RoleReader)
	contributor := addUser(t, e, "carl", identity.RoleContributor)
	const q = "?api-version=2024-04-01"
	const secret = "azure-account-key-c2VjcmV0"
	var seen strings.Builder
	body := `{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","endpoint":"core.windows.net","protocol":"https",
		"description":"team data","tags":{"team":"a"},
		"credentials":{"credentialsType":"AccountKey","secrets":{"secretsType":"AccountKey","key":"` + secret + `"}}}}`
	if got := send(t, e, reader, "PUT", armDatastores+"/blob_example"+q, body, nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's PUT: %s", got)
	}
	created := mustSend(t, e, contributor, "PUT", armDatastores+"/blob_example"+q, body, http.StatusCreated)
	seen.Write(created.body)
	var res struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Type       string `json:"type"`
		Properties struct {
			DatastoreType string            `json:"datastoreType"`
			AccountName   string            `json:"accountName"`
			ContainerName string            `json:"containerName"`
			IsDefault     bool              `json:"isDefault"`
			Tags          map[string]string `json:"tags"`
			Credentials   map[string]any    `json:"credentials"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(created.body, &res); err != nil {
		t.Fatal(err)
	}
	if res.ID != armDatastores+"/blob_example" || res.Type != "Microsoft.MachineLearningServices/workspaces/datastores" || res.Properties.DatastoreType != "AzureBlob" ||
		res.Properties.AccountName != "acct" || res.Properties.Tags["team"] != "a" || res.Properties.Credentials["credentialsType"] != "AccountKey" || res.Properties.Credentials["secrets"] != nil {
		t.Errorf("PUT answered %s", created.body)
	}
	seen.Write(mustSend(t, e, contributor, "PUT", armDatastores+"/blob_example"+q, body, http.StatusOK).body)
	seen.Write(mustSend(t, e, reader, "GET", armDatastores+"/blob_example"+q, "", http.StatusOK).body)
	// The native route and the CLI's see the same datastore.
	native := mustSend(t, e, reader, "GET", "/api/v1/workspaces/default/datastores/blob_example", "", http.StatusOK)
	if !strings.Contains(string(native.body), `"credentials_type":"account_key"`) {
		t.Errorf("native show: %s", native.body)
	}
	def := mustSend(t, e, reader, "GET", armDatastores+q+"&isDefault=true", "", http.StatusOK)
	seen.Write(def.body)
	var list struct {
		Value []struct {
			Name string `json:"name"`
		} `json:"value"`
		NextLink string `json:"nextLink"`
	}
	json.Unmarshal(def.body, &list)
	if len(list.Value) != 1 || list.Value[0].Name != "workspaceblobstore" {
		t.Errorf("isDefault=true: %s", def.body)
	}
	// listSecrets: only to writers, the secret in Azure's shape.
	if got := send(t, e, reader, "POST", armDatastores+"/blob_example/listSecrets"+q, "", nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's listSecrets: %s", got)
	}
	sec := mustSend(t, e, contributor, "POST", armDatastores+"/blob_example/listSecrets"+q, "", http.StatusOK)
	if !strings.Contains(string(sec.body), `"secretsType":"AccountKey"`) || !strings.Contains(string(sec.body), `"key":"`+secret+`"`) {
		t.Errorf("listSecrets: %s", sec.body)
	}
	// The built-ins' secret is a SAS of Shoal's Blob endpoint
	// (blob_test.go uses it): read-only for workspaceartifactstore.
	if got := send(t, e, contributor, "POST", armDatastores+"/workspaceblobstore/listSecrets"+q, "", nil); got.status != http.StatusOK || !strings.Contains(string(got.body), `"secretsType":"Sas"`) || !strings.Contains(string(got.body), "sig=") {
		t.Errorf("listSecrets of workspaceblobstore: %s", got)
	}
	if got := send(t, e, contributor, "POST", armDatastores+"/workspaceartifactstore/listSecrets"+q, "", nil); got.status != http.StatusOK || !strings.Contains(string(got.body), "sp=rl") {
		t.Errorf("listSecrets of workspaceartifactstore: %s", got)
	}
	// Hostile or mistaken bodies, refused naming the property.
	for _, bad := range []struct{ body, target string }{
		{`{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","endpoint":"http://169.254.169.254/a","credentials":{"credentialsType":"None"}}}`, "properties.endpoint"},
		{`{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","credentials":{"credentialsType":"Sas","secrets":{"secretsType":"AccountKey","key":"` + secret + `"}}}}`, "properties.credentials.secrets.secretsType"},
		{`{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","credentials":{"credentialsType":"Sas","secrets":{"secretsType":"Sas"}}}}`, "properties.credentials.credentialsType"},
		{`{"properties":{"datastoreType":"AzureFile","accountName":"acct"}}`, "properties.datastoreType"},
		{`{"properties":{"datastoreType":"AzureBlob","accountName":"acct","containerName":"data","colour":"red","credentials":{"credentialsType":"None"}}}`, "properties.colour"},
		{`{"properties":{"datastoreType":"AzureBlob","accountName":"ACCT","containerName":"data","credentials":{"credentialsType":"None"}}}`, "properties.accountName"},
	} {
		got := send(t, e, contributor, "PUT", armDatastores+"/bad"+q, bad.body, nil)
		seen.Write(got.body)
		if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), bad.target) {
			t.Errorf("%s: %s, want 400 naming %s", bad.body, got, bad.target)
		}
	}
	// Pages: 27 more datastores and the two built-ins make two pages.
	for i := range 27 {
		mustSend(t, e, contributor, "PUT", fmt.Sprintf("%s/nfs%02d%s", armDatastores, i, q), `{"properties":{"datastoreType":"Nfs","path":"/mnt/d","credentials":{"credentialsType":"None"}}}`, http.StatusCreated)
	}
	page := mustSend(t, e, reader, "GET", armDatastores+q, "", http.StatusOK)
	seen.Write(page.body)
	list.NextLink, list.Value = "", nil
	json.Unmarshal(page.body, &list)
	names := len(list.Value)
	if names != 25 || list.NextLink == "" {
		t.Fatalf("first page: %d, next %q", names, list.NextLink)
	}
	next := strings.TrimPrefix(list.NextLink, "http://shoal.test")
	list.NextLink, list.Value = "", nil
	json.Unmarshal(mustSend(t, e, reader, "GET", next, "", http.StatusOK).body, &list)
	if names+len(list.Value) != 30 || list.NextLink != "" {
		t.Errorf("second page: %d more, next %q", len(list.Value), list.NextLink)
	}
	mustSend(t, e, contributor, "DELETE", armDatastores+"/blob_example"+q, "", http.StatusOK)
	mustSend(t, e, contributor, "DELETE", armDatastores+"/blob_example"+q, "", http.StatusNoContent)
	mustSend(t, e, contributor, "DELETE", armDatastores+"/workspaceblobstore"+q, "", http.StatusBadRequest)
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the secret came out outside listSecrets: %s", seen.String())
	}
}

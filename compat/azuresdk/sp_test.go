package azuresdk

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/machinelearning/armmachinelearning/v4"
)

// admin calls Shoal's native API with the admin token.
func admin(t *testing.T, hc *http.Client, url, token, method, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out
}

// azidentity's ClientSecretCredential signs in to Shoal as a service
// principal made with the native API — through the AD FS authority
// (tenant "adfs") and through the Entra one with instance discovery off —
// and the SDK's computes pager follows nextLink across pages.
func TestGoSDKServicePrincipal(t *testing.T) {
	url, token, ca := shoalServer(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	sp := admin(t, hc, url, token, "POST", "/api/v1/serviceprincipals", map[string]string{"name": "go-sdk"})
	admin(t, hc, url, token, "POST", "/api/v1/workspaces/"+ws+"/roleassignments", map[string]string{"principal": "sp:go-sdk", "role": "Contributor"})
	for i := range 30 {
		admin(t, hc, url, token, "PUT", fmt.Sprintf("/api/v1/workspaces/%s/computes/page%02d", ws, i), map[string]any{"size": "Standard_DS3_v2", "max_instances": 1})
	}
	clientID, secret := sp["client_id"].(string), sp["client_secret"].(string)
	ctx := context.Background()
	idOpts := azcore.ClientOptions{Transport: hc}
	idOpts.Cloud.ActiveDirectoryAuthorityHost = sp["authority_host"].(string) + "/"

	adfs, err := azidentity.NewClientSecretCredential("adfs", clientID, secret, &azidentity.ClientSecretCredentialOptions{ClientOptions: idOpts})
	if err != nil {
		t.Fatal(err)
	}
	entra, err := azidentity.NewClientSecretCredential("72f988bf-86f1-41af-91ab-2d7cd011db47", clientID, secret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: idOpts, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := azidentity.NewClientSecretCredential("adfs", clientID, "shoalsp_wrong", &azidentity.ClientSecretCredentialOptions{ClientOptions: idOpts})
	if _, err := wrong.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/.default"}}); err == nil {
		t.Fatal("a wrong secret got a token")
	}

	// The AD FS credential asks for Shoal's own audience, the Entra one
	// for Resource Manager's (as docs/guides/azure-sdks.md's example does).
	audiences := map[string]string{"adfs": url, "entra": armAudience}
	for name, cred := range map[string]azcore.TokenCredential{"adfs": adfs, "entra": entra} {
		cc, err := armmachinelearning.NewComputeClient(sub, cred, optionsFor(url, audiences[name], ca))
		if err != nil {
			t.Fatal(err)
		}
		names, pages := map[string]bool{}, 0
		for pager := cc.NewListPager(rg, ws, nil); pager.More(); {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: NewListPager: %v", name, err)
			}
			pages++
			for _, c := range page.Value {
				if names[*c.Name] {
					t.Errorf("%s: %s listed twice", name, *c.Name)
				}
				names[*c.Name] = true
			}
		}
		if len(names) != 30 || pages != 2 {
			t.Errorf("%s: %d computes over %d pages, want 30 over 2", name, len(names), pages)
		}
		// Contributor: may read, may not change quotas (Owner's right).
		qc, _ := armmachinelearning.NewQuotasClient(sub, cred, optionsFor(url, audiences[name], ca))
		_, err = qc.Update(ctx, "westus", armmachinelearning.QuotaUpdateParameters{Value: []*armmachinelearning.QuotaBaseProperties{
			{ID: to.Ptr("/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.MachineLearningServices/workspaces/" + ws + "/quotas/standardDSv2Family"), Limit: to.Ptr[int64](8)},
		}}, nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.ErrorCode != "AuthorizationFailed" {
			t.Errorf("%s: a Contributor's Quotas.Update: %v, want 403 AuthorizationFailed", name, err)
		}
	}

	// A Reader may list but not create: refused by the role check before
	// any ARM handler runs, still in Azure's code.
	reader := admin(t, hc, url, token, "POST", "/api/v1/serviceprincipals", map[string]string{"name": "go-sdk-reader"})
	admin(t, hc, url, token, "POST", "/api/v1/workspaces/"+ws+"/roleassignments", map[string]string{"principal": "sp:go-sdk-reader", "role": "Reader"})
	rcred, err := azidentity.NewClientSecretCredential("adfs", reader["client_id"].(string), reader["client_secret"].(string), &azidentity.ClientSecretCredentialOptions{ClientOptions: idOpts})
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := armmachinelearning.NewComputeClient(sub, rcred, optionsFor(url, armAudience, ca))
	if _, err := rc.Get(ctx, rg, ws, "page00", nil); err != nil {
		t.Fatalf("a Reader's Get: %v", err)
	}
	_, err = rc.BeginCreateOrUpdate(ctx, rg, ws, "by-reader", armmachinelearning.ComputeResource{Properties: &armmachinelearning.AmlCompute{
		Properties: &armmachinelearning.AmlComputeProperties{VMSize: to.Ptr("Standard_DS3_v2")}}}, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.ErrorCode != "AuthorizationFailed" {
		t.Errorf("a Reader's BeginCreateOrUpdate: %v, want 403 AuthorizationFailed", err)
	}
}

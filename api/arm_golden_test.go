package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

var updateGolden = flag.Bool("update", false, "rewrite the ARM golden files from what the server answers")

// Each ARM exchange an SDK makes is kept as a golden file
// (testdata/arm/NN-name.golden: the request, the status, the headers the
// SDKs read and the body), so that a change in a shape shows up in review.
// Times, hosts and generated ids are replaced by placeholders. Run with
// -update to rewrite them after an intended change.
func TestARMGolden(t *testing.T) {
	e := newTestEnv(t)
	const ws = "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.MachineLearningServices/workspaces/default"
	const loc = "/subscriptions/sub-1/providers/Microsoft.MachineLearningServices/locations/westus"
	const v = "?api-version=2024-04-01"
	cluster := `{"location":"westus","tags":{"team":"vision"},"properties":{"computeType":"AmlCompute","description":"golden",
		"properties":{"vmSize":"Standard_DS3_v2","vmPriority":"Dedicated","scaleSettings":{"maxNodeCount":2,"minNodeCount":0,"nodeIdleTimeBeforeScaleDown":"PT120S"}}}}`
	// An instance with what the seeds set: SSH, a schedule, idle shutdown,
	// on behalf of a user, an identity, a setup script.
	instanceFull := `{"location":"westus","identity":{"type":"SystemAssigned"},"properties":{"computeType":"ComputeInstance","properties":{
		"vmSize":"Standard_DS3_v2","idleTimeBeforeShutdown":"PT20M",
		"sshSettings":{"sshPublicAccess":"Enabled","adminPublicKey":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGolden golden@example"},
		"personalComputeInstanceSettings":{"assignedUser":{"objectId":"reader","tenantId":"adfs"}},
		"schedules":{"computeStartStop":[{"action":"Stop","triggerType":"Recurrence","status":"Enabled",
			"recurrence":{"frequency":"Week","interval":1,"startTime":"2026-01-05T18:00:00","timeZone":"Pacific Standard Time","schedule":{"hours":[18],"minutes":[0],"weekDays":["Monday","Friday"]}}}]},
		"setupScripts":{"scripts":{"creationScript":{"scriptSource":"inline","scriptData":"ZWNobyBoaQ==","timeout":"5m"}}}}}}`
	sp, secret, err := e.svc.CreateServicePrincipal(identity.WithPrincipal(context.Background(), &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true}), "golden-sp", "")
	if err != nil {
		t.Fatal(err)
	}
	tokenForm := "grant_type=client_credentials&client_id=" + sp.ClientID + "&client_secret=" + secret + "&scope=https%3A%2F%2Fmanagement.azure.com%2F.default"
	quotaUpdate := `{"location":"westus","value":[
		{"id":"` + ws + `/quotas/standardDSv2Family","type":"Microsoft.MachineLearningServices/workspaces/quotas","limit":48,"unit":"Count"},
		{"id":"` + ws + `/quotas/standardDSv2Family","limit":100000,"unit":"Count"},
		{"id":"` + ws + `/quotas/noSuchFamily","limit":8,"unit":"Count"}]}`
	steps := []struct{ name, method, path, body string }{
		{"workspace-get", "GET", ws + v, ""},
		{"compute-put-cluster", "PUT", ws + "/computes/gold-cluster" + v, cluster},
		{"compute-get", "GET", ws + "/computes/gold-cluster" + v, ""},
		{"compute-list", "GET", ws + "/computes" + v, ""},
		{"compute-patch", "PATCH", ws + "/computes/gold-cluster" + v, `{"properties":{"properties":{"scaleSettings":{"maxNodeCount":3}}}}`},
		{"compute-listnodes", "POST", ws + "/computes/gold-cluster/listNodes" + v, ""},
		{"compute-listkeys", "POST", ws + "/computes/gold-cluster/listKeys" + v, ""},
		{"compute-operation-create", "GET", ws + "/computes/gold-cluster/operations/create" + v, ""},
		{"location-usages", "GET", loc + "/usages" + v, ""},
		{"location-quotas", "GET", loc + "/quotas" + v, ""},
		{"instance-put", "PUT", ws + "/computes/gold-ci" + v, `{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2","idleTimeBeforeShutdown":"PT30M"}}}`},
		{"instance-idle-shutdown", "POST", ws + "/computes/gold-ci/updateIdleShutdownSetting?api-version=2023-04-01-preview", `{"idleTimeBeforeShutdown":"PT45M"}`},
		{"instance-get", "GET", ws + "/computes/gold-ci" + v, ""},
		{"instance-stop", "POST", ws + "/computes/gold-ci/stop" + v, ""},
		{"instance-operation-stop", "GET", ws + "/computes/gold-ci/operations/stop" + v, ""},
		// No controller runs here, so the instance stays Stopping: a
		// start then is Azure's Conflict (the e2e and SDK suites run
		// start and restart to the end).
		{"instance-start-while-stopping", "POST", ws + "/computes/gold-ci/start" + v, ""},
		{"location-vmsizes", "GET", loc + "/vmSizes" + v, ""},
		{"location-update-quotas", "POST", loc + "/updateQuotas" + v, quotaUpdate},
		{"oauth-metadata", "GET", "/adfs/.well-known/openid-configuration", ""},
		{"oauth-token", "POST", "/adfs/oauth2/token", tokenForm},
		{"oauth-token-bad-secret", "POST", "/adfs/oauth2/token", strings.Replace(tokenForm, secret, "shoalsp_wrong", 1)},
		{"compute-put-bad", "PUT", ws + "/computes/gold-bad" + v, `{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"maxNodeCount":1,"minNodeCount":2}}}}`},
		{"compute-delete", "DELETE", ws + "/computes/gold-cluster" + v + "&underlyingResourceAction=Delete", ""},
		{"compute-get-missing", "GET", ws + "/computes/no-such" + v, ""},
		{"bad-api-version", "GET", ws + "/computes?api-version=2019-01-01", ""},
		{"compute-put-create", "PUT", ws + "/computes/gold-update" + v, cluster},
		{"compute-put-update", "PUT", ws + "/computes/gold-update" + v, strings.Replace(cluster, `"maxNodeCount":2`, `"maxNodeCount":4`, 1)},
		{"compute-operation-delete", "GET", ws + "/computes/gold-cluster/operations/delete" + v, ""},
		{"instance-start", "POST", ws + "/computes/gold-ci/start" + v, ""},
		{"instance-operation-start", "GET", ws + "/computes/gold-ci/operations/start" + v, ""},
		{"instance-restart", "POST", ws + "/computes/gold-ci/restart" + v, ""},
		{"instance-operation-restart", "GET", ws + "/computes/gold-ci/operations/restart" + v, ""},
		{"compute-put-forbidden", "PUT", ws + "/computes/gold-reader" + v, cluster},
		{"compute-list-unauthenticated", "GET", ws + "/computes" + v, ""},
		{"compute-listnodes-with-nodes", "POST", ws + "/computes/gpu/listNodes" + v, ""},
		{"location-update-quotas-low", "POST", loc + "/updateQuotas" + v, `{"location":"westus","value":[{"id":"` + ws + `/quotas/standardDSv2Family","limit":2,"unit":"Count"}]}`},
		{"instance-put-quota-exceeded", "PUT", ws + "/computes/goldci" + v, `{"location":"westus","properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2"}}}`},
		{"instance-put-full", "PUT", ws + "/computes/goldfull" + v, instanceFull},
		{"instance-get-full", "GET", ws + "/computes/goldfull" + v, ""},
		{"oauth-metadata-tenant", "GET", "/my-tenant/v2.0/.well-known/openid-configuration", ""},
		{"oauth-token-tenant", "POST", "/my-tenant/oauth2/v2.0/token", tokenForm},
	}
	// What happens between steps that no ARM call does: the controller
	// and the agent move an instance along (no controller runs here), a
	// Reader and an anonymous caller come by, a node joins.
	setInstance := func(state string) func() string {
		return func() string {
			err := e.store.Update(context.Background(), func(tx store.Tx) error {
				c, err := tx.GetCompute("default", "gold-ci")
				if err != nil {
					return err
				}
				c.Instance.State, c.Instance.Pending = state, ""
				return tx.UpdateCompute(c)
			})
			if err != nil {
				t.Fatal(err)
			}
			return e.admin
		}
	}
	before := map[string]func() string{
		"instance-start":               setInstance(compute.InstanceStopped),
		"instance-restart":             setInstance(compute.InstanceRunning),
		"compute-put-forbidden":        func() string { return addUser(t, e, "reader", identity.RoleReader) },
		"compute-list-unauthenticated": func() string { return "shoal_not-a-real-token" },
		"compute-listnodes-with-nodes": func() string { joinNode(t, e); return e.admin },
	}
	jwts := regexp.MustCompile(`"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"`)
	if *updateGolden {
		// Steps renamed or renumbered leave no stale files behind.
		old, _ := filepath.Glob(filepath.Join("testdata", "arm", "*.golden"))
		for _, f := range old {
			os.Remove(f)
		}
	}
	expiresIn := regexp.MustCompile(`("(?:ext_)?expires_in"): \d+`)
	times := regexp.MustCompile(`"\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:\d{2})"`)
	for i, st := range steps {
		token := e.admin
		if f := before[st.name]; f != nil {
			token = f()
		}
		req, _ := http.NewRequest(st.method, e.ts.URL+st.path, strings.NewReader(st.body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if strings.HasPrefix(st.name, "oauth-token") {
			req.Header.Del("Authorization")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var pretty bytes.Buffer
		if len(bytes.TrimSpace(raw)) > 0 && json.Indent(&pretty, raw, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(raw)
		}
		var got strings.Builder
		fmt.Fprintf(&got, "%s %s\n%s\n", st.method, st.path, resp.Status)
		if st.body != "" && strings.HasPrefix(st.name, "oauth-token") {
			fmt.Fprintf(&got, "(form) %s\n", st.body)
		}
		for _, h := range []string{"Azure-AsyncOperation", "Location", "Retry-After", "Content-Type"} {
			if v := resp.Header.Get(h); v != "" {
				fmt.Fprintf(&got, "%s: %s\n", h, v)
			}
		}
		got.WriteString("\n" + pretty.String() + "\n")
		text := strings.ReplaceAll(got.String(), e.ts.URL, "<server>")
		text = times.ReplaceAllString(text, `"<time>"`)
		text = jwts.ReplaceAllString(text, `"<jwt>"`)
		text = expiresIn.ReplaceAllString(text, `$1: "<seconds>"`)
		text = strings.NewReplacer(secret, "<secret>", sp.ClientID, "<client-id>").Replace(text)
		path := filepath.Join("testdata", "arm", fmt.Sprintf("%02d-%s.golden", i+1, st.name))
		if *updateGolden {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./api -run TestARMGolden -update to write it)", err)
		}
		if string(want) != text {
			t.Errorf("%s changed (go test ./api -run TestARMGolden -update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, text)
		}
	}
}

package azuresdk

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/machinelearning/armmachinelearning/v4"
)

// serverBin is the full binary every test's server runs: the one
// scripts/test built (SHOAL_SERVER_BIN), or one built here once per run
// (linking it took five seconds a test). The same rule as the main
// module's internal/testenv.ServerBinary, written here because this
// module of its own does not require the main one (its dependencies stay
// out of this module's go.mod); the copy is not needed, since nothing here
// changes the binary.
var serverBin struct {
	once sync.Once
	path string
	err  error
}

// TestMain removes the binary built here once the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverBin.path != "" && os.Getenv("SHOAL_SERVER_BIN") == "" {
		os.RemoveAll(filepath.Dir(serverBin.path))
	}
	os.Exit(code)
}

// serverBinary returns serverBin's path, building it the first time.
func serverBinary() (string, error) {
	serverBin.once.Do(func() {
		if p := os.Getenv("SHOAL_SERVER_BIN"); p != "" {
			serverBin.path = p
			return
		}
		dir, err := os.MkdirTemp("", "azuresdk-shoal-")
		if err != nil {
			serverBin.err = err
			return
		}
		serverBin.path = filepath.Join(dir, "shoal")
		build := exec.Command("go", "build", "-o", serverBin.path, "./cmd/shoal-server")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			serverBin.err = fmt.Errorf("building shoal: %v\n%s", err, out)
		}
	})
	return serverBin.path, serverBin.err
}

// shoalServer builds the shoal binary of the enclosing repository (once)
// and starts `shoal server --tls` on a free port; it returns the URL, the
// admin token and the CA to trust.
func shoalServer(t *testing.T) (string, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "server", "--tls", "--listen", addr, "--data-dir", data)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	logf, _ := os.Create(filepath.Join(dir, "server.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		token, err1 := os.ReadFile(filepath.Join(data, "admin.token"))
		ca, err2 := os.ReadFile(filepath.Join(data, "tls", "ca.pem"))
		if err1 == nil && err2 == nil && len(token) > 0 {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				return "https://" + addr, strings.TrimSpace(string(token)), ca
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("shoal server did not start:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tokenCredential hands the SDK Shoal's API token as its bearer token.
type tokenCredential string

func (c tokenCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(c), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// options point the SDK at Shoal: cloud.Configuration's endpoint and
// audience (Shoal's own URL), and an HTTP client trusting Shoal's CA.
func options(url string, ca []byte) *arm.ClientOptions {
	return optionsFor(url, url, ca)
}

// armAudience is Resource Manager's audience, which the ARM routes accept
// as well as Shoal's own URL: docs/guides/azure-sdks.md's Go example uses it.
const armAudience = "https://management.azure.com/"

// optionsFor is options with the token audience given.
func optionsFor(url, audience string, ca []byte) *arm.ClientOptions {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: url, Audience: audience},
		}},
		Transport: hc,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

const (
	sub = "00000000-0000-0000-0000-000000000001"
	rg  = "ml-project-rg"
	ws  = "default"
)

// The Go SDK's ComputeClient, UsagesClient, VirtualMachineSizesClient and
// WorkspacesClient.Get against Shoal: a cluster created, read, listed,
// its nodes listed and deleted, pollers included; the catalog and quota
// read; Azure's error codes where something is missing.
func TestGoSDK(t *testing.T) {
	url, token, ca := shoalServer(t)
	cred, opts := tokenCredential(token), options(url, ca)
	ctx := context.Background()

	wsc, err := armmachinelearning.NewWorkspacesClient(sub, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wsc.Get(ctx, rg, ws, nil)
	if err != nil {
		t.Fatalf("WorkspacesClient.Get: %v", err)
	}
	if *w.Name != ws || !strings.HasSuffix(*w.ID, "/resourceGroups/"+rg+"/providers/Microsoft.MachineLearningServices/workspaces/"+ws) {
		t.Errorf("workspace %s %s", *w.Name, *w.ID)
	}

	cc, err := armmachinelearning.NewComputeClient(sub, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	poller, err := cc.BeginCreateOrUpdate(ctx, rg, ws, "sdk-cluster", armmachinelearning.ComputeResource{
		Location: to.Ptr("westus"),
		Tags:     map[string]*string{"team": to.Ptr("vision")},
		Properties: &armmachinelearning.AmlCompute{
			ComputeType: to.Ptr(armmachinelearning.ComputeTypeAmlCompute),
			Description: to.Ptr("created by Azure's Go SDK"),
			Properties: &armmachinelearning.AmlComputeProperties{
				VMSize:     to.Ptr("STANDARD_DS3_V2"),
				VMPriority: to.Ptr(armmachinelearning.VMPriorityLowPriority),
				ScaleSettings: &armmachinelearning.ScaleSettings{
					MaxNodeCount: to.Ptr[int32](2), MinNodeCount: to.Ptr[int32](0), NodeIdleTimeBeforeScaleDown: to.Ptr("PT300S"),
				},
			},
		},
	}, nil)
	if err != nil {
		t.Fatalf("BeginCreateOrUpdate: %v", err)
	}
	fast := &runtime.PollUntilDoneOptions{Frequency: 100 * time.Millisecond}
	created, err := poller.PollUntilDone(ctx, fast)
	if err != nil {
		t.Fatalf("create: PollUntilDone: %v", err)
	}
	check := func(r armmachinelearning.ComputeResource, when string) {
		t.Helper()
		aml, ok := r.Properties.(*armmachinelearning.AmlCompute)
		if !ok {
			t.Fatalf("%s: properties are %T, want *AmlCompute", when, r.Properties)
		}
		p := aml.Properties
		if *r.Name != "sdk-cluster" || *aml.ProvisioningState != armmachinelearning.ProvisioningStateSucceeded || *aml.Description != "created by Azure's Go SDK" ||
			!strings.EqualFold(*p.VMSize, "Standard_DS3_v2") || *p.VMPriority != armmachinelearning.VMPriorityLowPriority ||
			*p.ScaleSettings.MaxNodeCount != 2 || *p.ScaleSettings.MinNodeCount != 0 || *p.ScaleSettings.NodeIdleTimeBeforeScaleDown != "PT300S" ||
			*r.Tags["team"] != "vision" || *p.AllocationState != armmachinelearning.AllocationStateSteady {
			t.Errorf("%s: %+v %+v %+v", when, r, aml, p)
		}
	}
	check(created.ComputeResource, "created")
	got, err := cc.Get(ctx, rg, ws, "sdk-cluster", nil)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	check(got.ComputeResource, "get")

	names := []string{}
	for pager := cc.NewListPager(rg, ws, nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, c := range page.Value {
			names = append(names, *c.Name)
		}
	}
	if fmt.Sprint(names) != "[sdk-cluster]" {
		t.Errorf("List: %v", names)
	}
	nodes := 0
	for pager := cc.NewListNodesPager(rg, ws, "sdk-cluster", nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListNodes: %v", err)
		}
		nodes += len(page.Nodes)
	}
	if nodes != 0 {
		t.Errorf("ListNodes: %d nodes on an idle cluster with min 0", nodes)
	}

	// Sizes and quota of the region.
	sc, _ := armmachinelearning.NewVirtualMachineSizesClient(sub, cred, opts)
	sizes, err := sc.List(ctx, "westus", nil)
	if err != nil {
		t.Fatalf("VirtualMachineSizes.List: %v", err)
	}
	found := false
	for _, sz := range sizes.Value {
		if *sz.Name == "Standard_DS3_v2" && *sz.VCPUs == 4 && *sz.Family == "standardDSv2Family" {
			found = true
		}
	}
	if !found {
		t.Errorf("VirtualMachineSizes.List has no Standard_DS3_v2 with 4 vCPUs (%d sizes)", len(sizes.Value))
	}
	uc, _ := armmachinelearning.NewUsagesClient(sub, cred, opts)
	usages := 0
	for pager := uc.NewListPager("westus", nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("Usages.List: %v", err)
		}
		for _, u := range page.Value {
			if *u.Unit != armmachinelearning.UsageUnitCount || u.Name == nil || u.Limit == nil {
				t.Errorf("usage %+v", u)
			}
			usages++
		}
	}
	if usages == 0 {
		t.Error("Usages.List is empty")
	}

	keys, err := cc.ListKeys(ctx, rg, ws, "sdk-cluster", nil)
	if err != nil || *keys.GetComputeSecrets().ComputeType != armmachinelearning.ComputeTypeAmlCompute {
		t.Fatalf("ListKeys: %+v %v", keys, err)
	}
	qc, _ := armmachinelearning.NewQuotasClient(sub, cred, opts)
	quotas := 0
	for pager := qc.NewListPager("westus", nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("Quotas.List: %v", err)
		}
		for _, q := range page.Value {
			if q.Limit == nil || q.Name == nil || *q.Unit != armmachinelearning.QuotaUnitCount {
				t.Errorf("quota %+v", q)
			}
			quotas++
		}
	}
	if quotas == 0 {
		t.Error("Quotas.List is empty")
	}

	// Workspace quotas (updateQuotas): each item's status as Azure's.
	quotaID := "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.MachineLearningServices/workspaces/" + ws + "/quotas/"
	upd, err := qc.Update(ctx, "westus", armmachinelearning.QuotaUpdateParameters{Value: []*armmachinelearning.QuotaBaseProperties{
		{ID: to.Ptr(quotaID + "standardDSv2Family"), Limit: to.Ptr[int64](48), Unit: to.Ptr(armmachinelearning.QuotaUnitCount)},
		{ID: to.Ptr(quotaID + "standardDSv2Family"), Limit: to.Ptr[int64](1 << 20), Unit: to.Ptr(armmachinelearning.QuotaUnitCount)},
		{ID: to.Ptr(quotaID + "noSuchFamily"), Limit: to.Ptr[int64](8), Unit: to.Ptr(armmachinelearning.QuotaUnitCount)},
	}}, nil)
	if err != nil {
		t.Fatalf("Quotas.Update: %v", err)
	}
	wantStatus := []armmachinelearning.Status{armmachinelearning.StatusSuccess, armmachinelearning.StatusInvalidQuotaExceedsSubscriptionLimit, armmachinelearning.StatusInvalidVMFamilyName}
	if len(upd.Value) != 3 {
		t.Fatalf("Quotas.Update answered %d items", len(upd.Value))
	}
	for i, v := range upd.Value {
		if v.Status == nil || *v.Status != wantStatus[i] {
			t.Errorf("Quotas.Update item %d: status %v, want %s", i, v.Status, wantStatus[i])
		}
	}
	for pager := qc.NewListPager("westus", nil); pager.More(); {
		page, _ := pager.NextPage(ctx)
		for _, q := range page.Value {
			if *q.Name.Value == "standardDSv2Family" && strings.Contains(*q.ID, "/workspaces/"+ws+"/") && *q.Limit != 48 {
				t.Errorf("after Quotas.Update: %s limit %d, want 48", *q.ID, *q.Limit)
			}
		}
	}

	// PATCH the scale settings (BeginUpdate), polled; Get shows them.
	up, err := cc.BeginUpdate(ctx, rg, ws, "sdk-cluster", armmachinelearning.ClusterUpdateParameters{
		Properties: &armmachinelearning.ClusterUpdateProperties{Properties: &armmachinelearning.ScaleSettingsInformation{
			ScaleSettings: &armmachinelearning.ScaleSettings{MaxNodeCount: to.Ptr[int32](3), NodeIdleTimeBeforeScaleDown: to.Ptr("PT10M")}}},
	}, nil)
	if err != nil {
		t.Fatalf("BeginUpdate: %v", err)
	}
	if _, err := up.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("update: PollUntilDone: %v", err)
	}
	got, err = cc.Get(ctx, rg, ws, "sdk-cluster", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Properties.(*armmachinelearning.AmlCompute).Properties.ScaleSettings; *s.MaxNodeCount != 3 || *s.NodeIdleTimeBeforeScaleDown != "PT600S" {
		t.Errorf("after BeginUpdate: max %d, idle %s", *s.MaxNodeCount, *s.NodeIdleTimeBeforeScaleDown)
	}

	// Delete, polled until the cluster is gone; then Azure's 404.
	dp, err := cc.BeginDelete(ctx, rg, ws, "sdk-cluster", armmachinelearning.UnderlyingResourceActionDelete, nil)
	if err != nil {
		t.Fatalf("BeginDelete: %v", err)
	}
	if _, err := dp.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("delete: PollUntilDone: %v", err)
	}
	_, err = cc.Get(ctx, rg, ws, "sdk-cluster", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound || re.ErrorCode != "ResourceNotFound" {
		t.Fatalf("Get after delete: %v; want 404 ResourceNotFound", err)
	}
	// A body the rules refuse: Azure's BadRequest, naming the field.
	_, err = cc.BeginCreateOrUpdate(ctx, rg, ws, "sdk-bad", armmachinelearning.ComputeResource{
		Properties: &armmachinelearning.AmlCompute{Properties: &armmachinelearning.AmlComputeProperties{
			ScaleSettings: &armmachinelearning.ScaleSettings{MaxNodeCount: to.Ptr[int32](1), MinNodeCount: to.Ptr[int32](3)}}},
	}, nil)
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.ErrorCode != "BadRequest" {
		t.Fatalf("min above max: %v; want 400 BadRequest", err)
	}
}

// An api-version Azure never published is refused with Azure's code.
func TestUnknownAPIVersion(t *testing.T) {
	url, token, ca := shoalServer(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", url+"/subscriptions/"+sub+"/resourceGroups/"+rg+"/providers/Microsoft.MachineLearningServices/workspaces/"+ws+"/computes?api-version=2019-01-01", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code string } }
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusBadRequest || body.Error.Code != "InvalidApiVersionParameter" {
		t.Fatalf("%d %s; want 400 InvalidApiVersionParameter", resp.StatusCode, body.Error.Code)
	}
}

// A compute instance stopped, started and restarted through the SDK's
// pollers, its state read back each time.
func TestGoSDKInstanceOperations(t *testing.T) {
	url, token, ca := shoalServer(t)
	cred, opts := tokenCredential(token), options(url, ca)
	ctx := context.Background()
	cc, _ := armmachinelearning.NewComputeClient(sub, cred, opts)
	// The seed's instance: SSH enabled with a key, idle shutdown after 30
	// minutes, created for another user.
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl sdk@test"
	cp, err := cc.BeginCreateOrUpdate(ctx, rg, ws, "sdk-ci", armmachinelearning.ComputeResource{
		Properties: &armmachinelearning.ComputeInstance{
			ComputeType: to.Ptr(armmachinelearning.ComputeTypeComputeInstance),
			Properties: &armmachinelearning.ComputeInstanceProperties{
				VMSize:      to.Ptr("Standard_DS3_v2"),
				SSHSettings: &armmachinelearning.ComputeInstanceSSHSettings{SSHPublicAccess: to.Ptr(armmachinelearning.SSHPublicAccessEnabled), AdminPublicKey: to.Ptr(key)},
			},
		},
	}, nil)
	if err != nil {
		t.Fatalf("BeginCreateOrUpdate(ComputeInstance): %v", err)
	}
	fast := &runtime.PollUntilDoneOptions{Frequency: 100 * time.Millisecond}
	if _, err := cp.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("create instance: %v", err)
	}
	got, err := cc.Get(ctx, rg, ws, "sdk-ci", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ci := got.Properties.(*armmachinelearning.ComputeInstance).Properties; *ci.SSHSettings.SSHPublicAccess != armmachinelearning.SSHPublicAccessEnabled ||
		*ci.SSHSettings.AdminUserName != "azureuser" || *ci.VMSize != "Standard_DS3_v2" {
		t.Errorf("the instance as created: %+v %+v", ci, ci.SSHSettings)
	}
	state := func() armmachinelearning.ComputeInstanceState {
		t.Helper()
		got, err := cc.Get(ctx, rg, ws, "sdk-ci", nil)
		if err != nil {
			t.Fatal(err)
		}
		ci, ok := got.Properties.(*armmachinelearning.ComputeInstance)
		if !ok || ci.Properties == nil || ci.Properties.State == nil {
			t.Fatalf("properties %T", got.Properties)
		}
		return *ci.Properties.State
	}
	deadline := time.Now().Add(60 * time.Second)
	for state() != armmachinelearning.ComputeInstanceStateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("the instance is %s, not Running, after 60 s", state())
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop, err := cc.BeginStop(ctx, rg, ws, "sdk-ci", nil)
	if err != nil {
		t.Fatalf("BeginStop: %v", err)
	}
	if _, err := stop.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if s := state(); s != armmachinelearning.ComputeInstanceStateStopped {
		t.Fatalf("after stop: %s", s)
	}
	start, err := cc.BeginStart(ctx, rg, ws, "sdk-ci", nil)
	if err != nil {
		t.Fatalf("BeginStart: %v", err)
	}
	if _, err := start.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("start: %v", err)
	}
	if s := state(); s != armmachinelearning.ComputeInstanceStateRunning {
		t.Fatalf("after start: %s", s)
	}
	restart, err := cc.BeginRestart(ctx, rg, ws, "sdk-ci", nil)
	if err != nil {
		t.Fatalf("BeginRestart: %v", err)
	}
	if _, err := restart.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if s := state(); s != armmachinelearning.ComputeInstanceStateRunning {
		t.Fatalf("after restart: %s", s)
	}
	dp, err := cc.BeginDelete(ctx, rg, ws, "sdk-ci", armmachinelearning.UnderlyingResourceActionDelete, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dp.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

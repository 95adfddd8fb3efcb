package rank

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/teststorage"
)

// dataAgent is a node with a data cache of its own in cacheDir.
func dataAgent(t *testing.T, srv *outputsServer, id string, accounts *runas.Accounts, cacheDir string) *testAgent {
	t.Helper()
	c, err := datacache.Open(cacheDir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return newTestAgent(t, Node{ServerURL: srv.URL, NodeID: id, Accounts: accounts, Data: c})
}

// dataTask is a rank whose input "data" comes from src in mode, typed typ.
func dataTask(id, command, typ, mode string, src *node.DataSource) *node.AgentTask {
	tk := artifactsTask(id, command)
	tk.Inputs = map[string]*job.JobInput{"data": {Type: typ, Path: src.URI, Mode: mode}}
	tk.InputSources = map[string]*node.DataSource{"data": src}
	return tk
}

// azuriteWith starts Azurite with container "data" holding files.
func azuriteWith(t *testing.T, files map[string]string) (*teststorage.Azurite, *container.Client) {
	az := teststorage.StartAzurite(t)
	cred, err := container.NewSharedKeyCredential(az.Account, az.Key)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := container.NewClientWithSharedKeyCredential(az.ServiceURL+"/data", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if _, err := admin.NewBlockBlobClient(k).UploadBuffer(context.Background(), []byte(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	return az, admin
}

func azuriteSource(az *teststorage.Azurite, prefix string, key string) *node.DataSource {
	return &node.DataSource{Kind: node.DataAzureBlob, URI: "azureml://datastores/blobs/paths/" + prefix, Datastore: "blobs",
		ServiceURL: az.ServiceURL, Container: "data", Prefix: prefix, AllowHTTP: true,
		Credentials: &asset.Credentials{AccountKey: key}}
}

// writeAttack is a command that reads the input, then tries to change
// it every way it can, saying in the outputs what it managed.
const writeAttack = `cat ${{inputs.data}}/a.csv > "$AZUREML_OUTPUT_out/a"; cat ${{inputs.data}}/sub/b.csv > "$AZUREML_OUTPUT_out/b"; ` +
	`(echo changed > ${{inputs.data}}/a.csv) 2>/dev/null && echo yes > "$AZUREML_OUTPUT_out/wrote"; ` +
	`rm -f ${{inputs.data}}/sub/b.csv 2>/dev/null; test -e ${{inputs.data}}/sub/b.csv || echo yes > "$AZUREML_OUTPUT_out/removed"; ` +
	`(echo x > ${{inputs.data}}/new) 2>/dev/null && echo yes > "$AZUREML_OUTPUT_out/created"; ` +
	`(echo changed > "$ENTRY/a.csv") 2>/dev/null && echo yes > "$AZUREML_OUTPUT_out/cache"; true`

// cachedFile finds rel in the cache's only entry.
func cachedFile(t *testing.T, cacheDir, rel string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(cacheDir, "entries", "*", rel))
	if len(m) != 1 {
		t.Fatalf("cache entries holding %s: %v, want one", rel, m)
	}
	return m[0]
}

// An Azure Blob input reaches the job in both modes with the account
// key: ro_mount shows the cache's entry read-only — the job can neither
// change, remove nor add a file, nor write the entry by its path — and
// download gives a copy of the job's own to change.
func TestRankReadsAzuriteInput(t *testing.T) {
	az, _ := azuriteWith(t, map[string]string{"train/a.csv": "a,1\n", "train/sub/b.csv": "b,2\n"})
	for acctName, accounts := range accountsCases(t) {
		for _, mode := range []string{jobio.ModeROMount, jobio.ModeDownload} {
			t.Run(acctName+"/"+mode, func(t *testing.T) {
				srv := newOutputsServer(t)
				cacheDir := t.TempDir()
				a := dataAgent(t, srv, "az-"+acctName+mode, accounts, cacheDir)
				// The command finds the cache entry by a pattern: the
				// entry's name is not known before the fetch.
				// An unisolated job runs with the agent's own rights: only
				// a job of an account of its own is kept off the entry.
				cmd := `ENTRY=$(ls -d ` + cacheDir + `/entries/*); ` + writeAttack
				if acctName != "isolated" {
					cmd = `ENTRY=/nonexistent; ` + writeAttack
				}
				tk := dataTask("att-az-"+acctName+"-"+mode, cmd, jobio.TypeURIFolder, mode, azuriteSource(az, "train/", az.Key))
				log := runRank(t, a, tk, nil)
				if rep := srv.final(t); rep.State != node.RankCompleted {
					t.Fatalf("final report %+v; log:\n%s", rep, log)
				}
				if srv.kept("out/a") != "a,1\n" || srv.kept("out/b") != "b,2\n" {
					t.Fatalf("the job read %q and %q; log:\n%s", srv.kept("out/a"), srv.kept("out/b"), log)
				}
				if b, _ := os.ReadFile(cachedFile(t, cacheDir, "a.csv")); string(b) != "a,1\n" {
					t.Errorf("the cache entry was changed to %q", b)
				}
				if acctName == "isolated" && srv.kept("out/cache") != "" {
					t.Errorf("the job wrote the cache entry by its path")
				}
				changed := srv.kept("out/wrote") != "" || srv.kept("out/removed") != "" || srv.kept("out/created") != ""
				if mode == jobio.ModeROMount && changed {
					t.Errorf("the job changed its ro_mount input: wrote %q removed %q created %q",
						srv.kept("out/wrote"), srv.kept("out/removed"), srv.kept("out/created"))
				}
				if mode == jobio.ModeDownload && (srv.kept("out/wrote") == "" || srv.kept("out/created") == "") {
					t.Errorf("a download input is not the job's own to change; log:\n%s", log)
				}
				// The mount is gone with the rank.
				if mode == jobio.ModeROMount && os.Geteuid() == 0 {
					p := filepath.Join(AttemptDir(a.RunDir, tk), "inputs", "data")
					if des, _ := os.ReadDir(p); len(des) != 0 {
						t.Errorf("the input is still mounted after the rank: %v", des)
					}
				}
			})
		}
	}
}

// An S3 input (download), a file over plain HTTP (uri_file: the path is
// the file), a folder on an nfs datastore (ro_mount, read in place) and
// a direct input (the URI itself) reach the job.
func TestRankReadsS3HTTPNFSAndDirectInputs(t *testing.T) {
	s3 := teststorage.StartS3(t)
	s3.Bucket(t, "bkt")
	os.MkdirAll(filepath.Join(s3.Dir, "bkt", "d"), 0o755)
	os.WriteFile(filepath.Join(s3.Dir, "bkt", "d", "x.txt"), []byte("from s3\n"), 0o644)
	h := teststorage.StartHTTP(t, map[string][]byte{"/files/iris.csv": []byte("iris\n")})
	nfs := t.TempDir()
	os.MkdirAll(filepath.Join(nfs, "sets", "one"), 0o755)
	os.WriteFile(filepath.Join(nfs, "sets", "one", "n.txt"), []byte("from nfs\n"), 0o644)
	os.Chmod(nfs, 0o755)

	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "mixed", runas.Unisolated(), t.TempDir())
	tk := artifactsTask("att-mixed", `cat ${{inputs.s3}}/x.txt > "$AZUREML_OUTPUT_out/s3"; cat ${{inputs.url}} > "$AZUREML_OUTPUT_out/url"; `+
		`cat ${{inputs.nfs}}/n.txt > "$AZUREML_OUTPUT_out/nfs"; echo ${{inputs.direct}} > "$AZUREML_OUTPUT_out/direct"; `+
		`echo "$AZURE_ML_INPUT_direct" > "$AZUREML_OUTPUT_out/direct_env"`)
	tk.Inputs = map[string]*job.JobInput{
		"s3":     {Type: jobio.TypeURIFolder, Path: "azureml://datastores/s3/paths/d/", Mode: jobio.ModeDownload},
		"url":    {Type: jobio.TypeURIFile, Path: h.URL + "/files/iris.csv"},
		"nfs":    {Type: jobio.TypeURIFolder, Path: "azureml://datastores/nfs/paths/sets/one"},
		"direct": {Type: jobio.TypeURIFolder, Path: "azureml://datastores/s3/paths/d/", Mode: jobio.ModeDirect},
	}
	tk.InputSources = map[string]*node.DataSource{
		"s3": {Kind: node.DataS3, URI: "azureml://datastores/s3/paths/d/", ServiceURL: s3.EndpointURL, Container: "bkt", Prefix: "d/",
			Credentials: &asset.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey}},
		"url":    {Kind: node.DataHTTP, URI: h.URL + "/files/iris.csv", ServiceURL: h.URL + "/files/iris.csv", AllowHTTP: true},
		"nfs":    {Kind: node.DataNFS, URI: "azureml://datastores/nfs/paths/sets/one", Root: nfs, Prefix: "sets/one"},
		"direct": {Kind: node.DataS3, URI: "azureml://datastores/s3/paths/d/", ServiceURL: "http://192.0.2.1:9", Container: "bkt", Prefix: "d/"},
	}
	log := runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted {
		t.Fatalf("final report %+v; log:\n%s", rep, log)
	}
	for rel, want := range map[string]string{"out/s3": "from s3\n", "out/url": "iris\n", "out/nfs": "from nfs\n",
		"out/direct": "azureml://datastores/s3/paths/d/\n", "out/direct_env": "azureml://datastores/s3/paths/d/\n"} {
		if got := srv.kept(rel); got != want {
			t.Errorf("%s = %q, want %q; log:\n%s", rel, got, want, log)
		}
	}
}

// Two ranks of the same version fetch it once: the second is served
// from the cache. The test's server gives a file's length as its ETag,
// so new bytes of the same length are the same version to the agent,
// and the second rank seeing the first bytes proves no second fetch.
func TestRankInputFetchedOncePerVersion(t *testing.T) {
	h := teststorage.StartHTTP(t, map[string][]byte{"/v.txt": []byte("first\n")})
	src := &node.DataSource{Kind: node.DataHTTP, URI: h.URL + "/v.txt", ServiceURL: h.URL + "/v.txt", AllowHTTP: true}
	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "once", runas.Unisolated(), t.TempDir())
	runRank(t, a, dataTask("att-once-1", `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/v"`, jobio.TypeURIFile, "", src), nil)
	if got := srv.kept("out/v"); got != "first\n" {
		t.Fatalf("first rank read %q", got)
	}
	h.Put("/v.txt", []byte("again\n"))
	runRank(t, a, dataTask("att-once-2", `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/v"`, jobio.TypeURIFile, "", src), nil)
	if got := srv.kept("out/v"); got != "first\n" {
		t.Fatalf("second rank read %q: the input was fetched again", got)
	}
	// A new version (another length, so another ETag) is a new entry.
	h.Put("/v.txt", []byte("second version\n"))
	runRank(t, a, dataTask("att-once-3", `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/v"`, jobio.TypeURIFile, "", src), nil)
	if got := srv.kept("out/v"); got != "second version\n" {
		t.Fatalf("a new version read %q", got)
	}
}

// An input that cannot be had fails the rank at once as the job's
// (input_failed), in the source's words, never its secret; its command
// never runs. A URL at the loopback, the metadata address or the
// server's own port is refused before any connection.
func TestRankInputFailures(t *testing.T) {
	az, _ := azuriteWith(t, map[string]string{"train/a.csv": "a\n"})
	ip := teststorage.RequireHostIP(t)
	// The agent API on the host's address, as a job's network sees it.
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newOutputsServer(t)
	api := httptest.NewUnstartedServer(srv.Config.Handler)
	api.Listener.Close()
	api.Listener = l
	api.Start()
	t.Cleanup(api.Close)
	srv.URL = api.URL
	wrongKey := "d3Jvbmcga2V5IGZvciB0aGUgZGV2IGFjY291bnQ="
	for name, c := range map[string]struct {
		src  *node.DataSource
		want []string
	}{
		"wrong key":         {azuriteSource(az, "train/", wrongKey), []string{"input data", "403"}},
		"missing prefix":    {azuriteSource(az, "nothing/", az.Key), []string{"input data", "no objects"}},
		"loopback url":      {&node.DataSource{Kind: node.DataHTTP, URI: "http://127.0.0.1:9/x", ServiceURL: "http://127.0.0.1:9/x", AllowHTTP: true}, []string{"loopback"}},
		"metadata url":      {&node.DataSource{Kind: node.DataHTTP, URI: "http://169.254.169.254/latest/meta-data", ServiceURL: "http://169.254.169.254/latest/meta-data", AllowHTTP: true}, []string{"link-local"}},
		"localhost name":    {&node.DataSource{Kind: node.DataHTTP, URI: "http://localhost:1/x", ServiceURL: "http://localhost:1/x", AllowHTTP: true}, []string{"loopback"}},
		"the server's port": {&node.DataSource{Kind: node.DataHTTP, URI: api.URL + "/agent/v1/artifacts/x", ServiceURL: api.URL + "/agent/v1/artifacts/x", AllowHTTP: true}, []string{"Shoal's own endpoints"}},
		"blob on loopback":  {&node.DataSource{Kind: node.DataAzureBlob, URI: "azureml://datastores/b/paths/x", ServiceURL: "http://127.0.0.1:10000/devstoreaccount1", Container: "data", Prefix: "x", AllowHTTP: true}, []string{"loopback"}},
	} {
		t.Run(name, func(t *testing.T) {
			a := dataAgent(t, srv, "fail-"+strings.ReplaceAll(name, " ", "-"), runas.Unisolated(), t.TempDir())
			tk := dataTask("att-fail-"+strings.ReplaceAll(name, " ", "-"), `echo RAN`, jobio.TypeURIFile, "", c.src)
			srv.mu.Lock()
			srv.reps = nil
			srv.mu.Unlock()
			log := runRank(t, a, tk, nil)
			rep := srv.final(t)
			if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed {
				t.Fatalf("final report %+v, want Failed input_failed; log:\n%s", rep, log)
			}
			for _, w := range c.want {
				if !strings.Contains(rep.Reason, w) {
					t.Errorf("reason %q lacks %q", rep.Reason, w)
				}
			}
			if strings.Contains(rep.Reason, wrongKey) || strings.Contains(log, wrongKey) || strings.Contains(rep.Reason, az.Key) {
				t.Errorf("the key is in the reason or log: %q", rep.Reason)
			}
			if strings.Contains(log, "RAN") {
				t.Errorf("the command ran without its input:\n%s", log)
			}
		})
	}
}

// Outputs whose YAML names a datastore are uploaded there when the rank
// completes: an S3 bucket and an Azure Blob container; a refused upload
// fails the rank as output_failed in the datastore's words.
func TestRankUploadsOutputsToDatastores(t *testing.T) {
	az, admin := azuriteWith(t, nil)
	s3 := teststorage.StartS3(t)
	s3.Bucket(t, "outs")
	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "outs", runas.Unisolated(), t.TempDir())
	tk := artifactsTask("att-outs", `mkdir -p "$AZUREML_OUTPUT_out/sub"; echo m > "$AZUREML_OUTPUT_out/sub/m.txt"; echo b > "$AZUREML_OUTPUT_blob/b.txt"`)
	tk.Outputs = []string{"out", "blob"}
	tk.OutputTargets = map[string]*node.DataSource{
		"out": {Kind: node.DataS3, URI: "azureml://datastores/s3/paths/runs/job/out/", ServiceURL: s3.EndpointURL, Container: "outs", Prefix: "runs/job/out/",
			Credentials: &asset.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey}},
		"blob": azuriteSource(az, "runs/job/blob/", az.Key),
	}
	log := runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted {
		t.Fatalf("final report %+v; log:\n%s", rep, log)
	}
	if b, err := os.ReadFile(filepath.Join(s3.Dir, "outs", "runs", "job", "out", "sub", "m.txt")); err != nil || string(b) != "m\n" {
		t.Errorf("the S3 output: %q, %v", b, err)
	}
	resp, err := admin.NewBlobClient("runs/job/blob/b.txt").DownloadStream(context.Background(), nil)
	if err != nil {
		t.Fatalf("the Blob output: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "b\n" {
		t.Errorf("the Blob output holds %q", got)
	}

	// A wrong secret: the rank fails, the datastore's words say why.
	srv2 := newOutputsServer(t)
	b := dataAgent(t, srv2, "outs-bad", runas.Unisolated(), t.TempDir())
	bad := artifactsTask("att-outs-bad", `echo m > "$AZUREML_OUTPUT_out/m.txt"`)
	bad.OutputTargets = map[string]*node.DataSource{"out": {Kind: node.DataS3, URI: "azureml://datastores/s3/paths/x/", ServiceURL: s3.EndpointURL, Container: "outs", Prefix: "x/",
		Credentials: &asset.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: "not-the-secret"}}}
	log = runRank(t, b, bad, nil)
	rep := srv2.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankOutputFailed || !strings.Contains(rep.Reason, "output out") ||
		!strings.Contains(rep.Reason, "SignatureDoesNotMatch") || strings.Contains(rep.Reason, "not-the-secret") {
		t.Fatalf("final report %+v, want Failed output_failed with S3's words; log:\n%s", rep, log)
	}
}

// A container rank reads a ro_mount input through a read-only volume:
// the file is there at ${{inputs.data}}, and the job in its container
// can neither change it nor add to its folder.
func TestContainerRankReadsInputReadOnly(t *testing.T) {
	env := testctr.Shared(t)
	h := teststorage.StartHTTP(t, map[string][]byte{"/d/iris.csv": []byte("iris in a container\n")})
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-input")
	c, err := datacache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	a.Data = c
	tk := task("att-ctr-input", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.Inputs = map[string]*job.JobInput{"data": {Type: jobio.TypeURIFile, Path: h.URL + "/d/iris.csv"}}
	tk.InputSources = map[string]*node.DataSource{"data": {Kind: node.DataHTTP, URI: h.URL + "/d/iris.csv", ServiceURL: h.URL + "/d/iris.csv", AllowHTTP: true}}
	tk.Command = `cat ${{inputs.data}}; (echo changed > ${{inputs.data}}) 2>/dev/null && echo WROTE-INPUT; ` +
		`(echo x > $(dirname ${{inputs.data}})/new) 2>/dev/null && echo CREATED-IN-INPUT; true`
	log := runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted {
		t.Fatalf("final report %+v; log:\n%s", rep, log)
	}
	if !strings.Contains(log, "iris in a container") {
		t.Errorf("the container did not read its input:\n%s", log)
	}
	if strings.Contains(log, "WROTE-INPUT") || strings.Contains(log, "CREATED-IN-INPUT") {
		t.Errorf("the container changed its ro_mount input:\n%s", log)
	}
	noContainersLeft(t, env, "ctr-input")
}

// A rank fetching an input is Preparing, saying which input, from which
// asset, and how far the fetch got, as an image pull says it.
func TestRankReportsFetchingAsPreparing(t *testing.T) {
	h := teststorage.StartHTTP(t, map[string][]byte{"/iris.csv": []byte(strings.Repeat("x", 3_000_000))})
	srv := newOutputsServer(t)
	seen := make(chan string, 16)
	srv.notify = func(rep node.RankReport) {
		if rep.State == node.RankPreparing {
			seen <- rep.Reason
		}
	}
	a := dataAgent(t, srv, "prep", runas.Unisolated(), t.TempDir())
	src := &node.DataSource{Kind: node.DataHTTP, URI: h.URL + "/iris.csv", ServiceURL: h.URL + "/iris.csv", AllowHTTP: true, Asset: "iris:3"}
	runRank(t, a, dataTask("att-prep", `true`, jobio.TypeURIFile, "", src), nil)
	select {
	case reason := <-seen:
		if !strings.HasPrefix(reason, "fetching input data (azureml:iris:3)") {
			t.Errorf("Preparing reason %q", reason)
		}
	case <-time.After(time.Minute):
		t.Fatal("no Preparing report while the input was fetched")
	}
	if got, want := [2]int64{megabytes(120_400_000), megabytes(216_600_000)}, [2]int64{120, 217}; got != want {
		t.Errorf("megabytes: %v, want %v", got, want)
	}
}

// An nfs input stays inside its datastore's path: a prefix climbing out
// of it, or a link in it leading out, fails the job, reading nothing.
func TestRankNFSInputStaysInItsPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret\n"), 0o644)
	os.Symlink(outside, filepath.Join(root, "link"))
	for name, prefix := range map[string]string{"dotdot": "../" + filepath.Base(outside), "link": "link"} {
		t.Run(name, func(t *testing.T) {
			srv := newOutputsServer(t)
			a := dataAgent(t, srv, "nfs-"+name, runas.Unisolated(), t.TempDir())
			src := &node.DataSource{Kind: node.DataNFS, URI: "azureml://datastores/nfs/paths/" + prefix, Root: root, Prefix: prefix}
			log := runRank(t, a, dataTask("att-nfs-"+name, `cat ${{inputs.data}}/secret`, jobio.TypeURIFolder, "", src), nil)
			rep := srv.final(t)
			if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || strings.Contains(log, "host secret") {
				t.Fatalf("final report %+v, want Failed input_failed; log:\n%s", rep, log)
			}
		})
	}
}

// Cancelling a rank while it fetches an input ends the fetch: the rank
// ends Canceled, not as an input the job could not get.
func TestRankStoppedWhileFetching(t *testing.T) {
	ip := teststorage.RequireHostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}, 1)
	slow := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done() // never answers: only the rank's stop ends the fetch
	}))
	slow.Listener.Close()
	slow.Listener = l
	slow.Start()
	t.Cleanup(slow.Close)
	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "stop-fetch", runas.Unisolated(), t.TempDir())
	src := &node.DataSource{Kind: node.DataHTTP, URI: slow.URL + "/big.bin", ServiceURL: slow.URL + "/big.bin", AllowHTTP: true}
	log := runRank(t, a, dataTask("att-stop-fetch", `echo RAN`, jobio.TypeURIFile, "", src), func(r *Rank) {
		<-asked
		r.Stop("canceled")
	})
	rep := srv.final(t)
	if rep.State != node.RankCanceled || rep.Failure != "" || strings.Contains(log, "RAN") {
		t.Fatalf("final report %+v, want Canceled; log:\n%s", rep, log)
	}
}

// A host rank in a network namespace of its own fetches its inputs
// through that namespace, never the agent's network: with slirp4netns
// (the namespace's way out) it reaches the input; without one the
// namespace reaches nothing outside, and neither does the fetch.
func TestRankFetchesThroughTheJobsNetwork(t *testing.T) {
	testenv.Root(t, "makes the job's network namespace")
	slirp := testenv.Command(t, "slirp4netns", "slirp4netns (the namespace's way out)", "apt-get install slirp4netns")
	h := teststorage.StartHTTP(t, map[string][]byte{"/n.txt": []byte("through the namespace\n")})
	src := &node.DataSource{Kind: node.DataHTTP, URI: h.URL + "/n.txt", ServiceURL: h.URL + "/n.txt", AllowHTTP: true}
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, way := range map[string]string{"slirp": slirp, "no way out": ""} {
		t.Run(name, func(t *testing.T) {
			srv := newOutputsServer(t)
			a := dataAgent(t, srv, "ns-"+strings.ReplaceAll(name, " ", "-"), accounts, t.TempDir())
			a.Networks = NewNetworks(way, srv.URL)
			tk := dataTask("att-ns-"+strings.ReplaceAll(name, " ", "-"), `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/n"`, jobio.TypeURIFile, jobio.ModeDownload, src)
			log := runRank(t, a, tk, nil)
			rep := srv.final(t)
			if way != "" {
				if rep.State != node.RankCompleted || srv.kept("out/n") != "through the namespace\n" {
					t.Fatalf("final report %+v, read %q; log:\n%s", rep, srv.kept("out/n"), log)
				}
				return
			}
			if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || !strings.Contains(rep.Reason, "no slirp4netns") {
				t.Fatalf("final report %+v, want input_failed: the namespace has no way out; log:\n%s", rep, log)
			}
		})
	}
}

// Another job's kept output is read through the agent API's inputs
// route of the rank; one the server does not have fails the job as
// input_failed in the server's words.
func TestRankReadsAnotherJobsKeptOutput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "model.txt"), []byte("kept by job one\n"), 0o644)
	var tarball bytes.Buffer
	if _, err := archive.Pack(&tarball, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := newOutputsServer(t)
	srv.inputs = map[string][]byte{"att-kept/ranks/0/inputs/model": tarball.Bytes()}
	a := dataAgent(t, srv, "kept", runas.Unisolated(), t.TempDir())
	src := &node.DataSource{Kind: node.DataShoal, URI: "azureml://jobs/one/outputs/model", OutputOf: "one", Output: "model"}
	tk := dataTask("att-kept", `cat ${{inputs.data}}/model.txt > "$AZUREML_OUTPUT_out/m"`, jobio.TypeURIFolder, "", src)
	tk.Inputs["model"], tk.InputSources["model"] = tk.Inputs["data"], src
	delete(tk.Inputs, "data")
	delete(tk.InputSources, "data")
	tk.Command = `cat ${{inputs.model}}/model.txt > "$AZUREML_OUTPUT_out/m"`
	log := runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || srv.kept("out/m") != "kept by job one\n" {
		t.Fatalf("final report %+v, read %q; log:\n%s", rep, srv.kept("out/m"), log)
	}

	// A path inside the output: the input is that file.
	srv3 := newOutputsServer(t)
	srv3.inputs = map[string][]byte{"att-kept-file/ranks/0/inputs/data": tarball.Bytes()}
	c := dataAgent(t, srv3, "kept-file", runas.Unisolated(), t.TempDir())
	file := &node.DataSource{Kind: node.DataShoal, URI: "azureml://datastores/workspaceblobstore/paths/azureml/one/model/model.txt", OutputOf: "one", Output: "model", Prefix: "model.txt"}
	log = runRank(t, c, dataTask("att-kept-file", `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/m"`, jobio.TypeURIFile, "", file), nil)
	if rep := srv3.final(t); rep.State != node.RankCompleted || srv3.kept("out/m") != "kept by job one\n" {
		t.Fatalf("a file of a kept output: final report %+v, read %q; log:\n%s", rep, srv3.kept("out/m"), log)
	}

	srv2 := newOutputsServer(t)
	b := dataAgent(t, srv2, "kept-gone", runas.Unisolated(), t.TempDir())
	log = runRank(t, b, dataTask("att-kept-gone", `echo RAN`, jobio.TypeURIFolder, "", src), nil)
	if rep := srv2.final(t); rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || strings.Contains(log, "RAN") {
		t.Fatalf("final report %+v, want Failed input_failed; log:\n%s", rep, log)
	}
}

// An input larger than the node's whole data cache fails its job at
// once, saying both sizes, rather than filling the disk.
func TestRankInputLargerThanTheCache(t *testing.T) {
	h := teststorage.StartHTTP(t, map[string][]byte{"/big.bin": bytes.Repeat([]byte("x"), 4096)})
	srv := newOutputsServer(t)
	c, err := datacache.Open(t.TempDir(), 1024)
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "too-large", Accounts: runas.Unisolated(), Data: c})
	src := &node.DataSource{Kind: node.DataHTTP, URI: h.URL + "/big.bin", ServiceURL: h.URL + "/big.bin", AllowHTTP: true}
	log := runRank(t, a, dataTask("att-too-large", `echo RAN`, jobio.TypeURIFile, "", src), nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || !strings.Contains(rep.Reason, "4096") || !strings.Contains(rep.Reason, "1024") || strings.Contains(log, "RAN") {
		t.Fatalf("final report %+v, want input_failed naming both sizes; log:\n%s", rep, log)
	}
}

// A URL at a port the agent itself serves on the host's network (the
// node's SSH server) is refused as the server's is.
func TestRankInputAtTheAgentsOwnPortRefused(t *testing.T) {
	h := teststorage.StartHTTP(t, map[string][]byte{"/x": []byte("the agent's\n")})
	own := strings.TrimPrefix(h.URL, "http://")
	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "own-port", runas.Unisolated(), t.TempDir())
	a.OwnEndpoints = func() []string { return []string{own} }
	src := &node.DataSource{Kind: node.DataHTTP, URI: h.URL + "/x", ServiceURL: h.URL + "/x", AllowHTTP: true}
	log := runRank(t, a, dataTask("att-own-port", `cat ${{inputs.data}}`, jobio.TypeURIFile, "", src), nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || !strings.Contains(rep.Reason, "Shoal's own endpoints") || strings.Contains(log, "the agent's") {
		t.Fatalf("final report %+v, want input_failed: the agent's own endpoint; log:\n%s", rep, log)
	}
}

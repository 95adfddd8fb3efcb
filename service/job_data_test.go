package service_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/datastores"
	"github.com/shoal-ml/shoal/service/models"
)

// registerData registers a data asset version in the harness's workspace.
func (h *harness) registerData(name, version, typ, path string) {
	h.t.Helper()
	if _, _, err := dataassets.New(dataassets.Config{Store: h.store, Artifacts: h.files}).Create(h.ctx, &asset.Data{Workspace: ws, Name: name, Version: version, Type: typ, Path: path}); err != nil {
		h.t.Fatalf("register data %s:%s: %v", name, version, err)
	}
}

// registerModel registers a model version in the harness's workspace.
func (h *harness) registerModel(name, version, typ, path string) {
	h.t.Helper()
	if _, _, err := models.New(models.Config{Store: h.store, Artifacts: h.files}).Create(h.ctx, &asset.Model{Workspace: ws, Name: name, Version: version, Type: typ, Path: path}); err != nil {
		h.t.Fatalf("register model %s:%s: %v", name, version, err)
	}
}

// createDatastore creates a datastore from its document (credentials in
// clear, as the CLI sends them).
func (h *harness) createDatastore(doc string) {
	h.t.Helper()
	spec, err := asset.DecodeDatastore([]byte(doc))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, _, err := datastores.New(datastores.Config{Store: h.store, SecretsKey: h.secretsKey}).Create(h.ctx, ws, spec); err != nil {
		h.t.Fatalf("create datastore: %v", err)
	}
}

func dataJob(name string, inputs map[string]*job.JobInput) *job.JobSpec {
	return &job.JobSpec{Name: name, Command: "true", Compute: "cpu", Inputs: inputs}
}

// An asset reference is resolved at submission and the version recorded
// on the input: by version (an archived one too, as Azure runs it), or
// @latest, the newest not archived. What does not exist, or does not fit
// the input's type, is refused naming the field.
func TestAssetInputsResolveAtSubmission(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.registerData("iris", "1", "uri_file", "https://example.com/iris.csv")
	h.registerData("iris", "2", "uri_file", "https://example.com/iris2.csv")
	h.registerData("iris", "3", "uri_file", "https://example.com/iris3.csv")
	if _, err := dataassets.New(dataassets.Config{Store: h.store}).Archive(h.ctx, ws, "iris", "3", true); err != nil {
		t.Fatal(err)
	}
	h.registerModel("net", "1", "mlflow_model", "azureml://datastores/workspaceblobstore/paths/azureml/old/model/")

	j := h.submitSpec(dataJob("latest", map[string]*job.JobInput{
		"d": {Type: "uri_file", Path: "azureml:iris@latest"},
		"e": {Type: "uri_file", Path: "azureml:iris:3"},
		"f": {Type: "uri_file", Path: "azureml://subscriptions/s/resourcegroups/rg/workspaces/" + ws + "/data/iris/versions/1"},
		"m": {Type: "mlflow_model", Path: "azureml:net:1"},
		"c": {Type: "custom_model", Path: "azureml:net@latest"},
	}))
	got, err := h.svc.FindJob(h.ctx, ws, j.Name)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"d": "iris:2", "e": "iris:3", "f": "iris:1", "m": "net:1", "c": "net:1"} {
		if a := got.Inputs[in].Asset; a != want {
			t.Errorf("input %s resolved to %q, want %q", in, a, want)
		}
	}
	if got.Inputs["d"].Path != "azureml:iris@latest" {
		t.Errorf("the path as given was not kept: %q", got.Inputs["d"].Path)
	}
	// A later version does not change what a submitted job reads.
	h.registerData("iris", "4", "uri_file", "https://example.com/iris4.csv")
	if got, _ := h.svc.FindJob(h.ctx, ws, j.Name); got.Inputs["d"].Asset != "iris:2" {
		t.Errorf("after a new version, the job reads %q", got.Inputs["d"].Asset)
	}

	refuse := func(what string, in *job.JobInput, parts ...string) {
		t.Helper()
		_, _, err := h.svc.SubmitJob(h.ctx, ws, dataJob("", map[string]*job.JobInput{"x": in}))
		wantFieldRefusal(t, what, err, "inputs.x.path", parts...)
	}
	refuse("no such version", &job.JobInput{Type: "uri_file", Path: "azureml:iris:9"}, `data asset "iris" has no version 9`)
	refuse("no such asset", &job.JobInput{Type: "uri_folder", Path: "azureml:nothing@latest"}, `data asset "nothing" is not in workspace`)
	refuse("type mismatch", &job.JobInput{Type: "uri_folder", Path: "azureml:iris:1"}, "is a uri_file", "uri_folder input")
	refuse("model for data", &job.JobInput{Type: "uri_folder", Path: "azureml://models/net/versions/1"}, "names a model")
	refuse("data for model", &job.JobInput{Type: "custom_model", Path: "azureml:iris:1"}, `model "iris" is not in workspace`)
	refuse("model type", &job.JobInput{Type: "triton_model", Path: "azureml:net:1"}, "is a mlflow_model")
	refuse("unknown datastore", &job.JobInput{Type: "uri_folder", Path: "azureml://datastores/nope/paths/x/"}, "datastore nope is not in workspace")
	_, _, err = h.svc.SubmitJob(h.ctx, ws, dataJob("", map[string]*job.JobInput{"x": {Type: "uri_file", Path: "azureml:iris:9"}}))
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a missing version is %s, want ENOTFOUND", core.ErrorCode(err))
	}
	// Every version archived: @latest names none.
	if _, err := dataassets.New(dataassets.Config{Store: h.store}).Archive(h.ctx, ws, "iris", "", true); err != nil {
		t.Fatal(err)
	}
	refuse("all archived", &job.JobInput{Type: "uri_file", Path: "azureml:iris@latest"}, "no version that is not archived")
	// Pipelines check their inputs at submission too.
	p, err := pipelinejob.DecodePipelineSpec([]byte(`{"type":"pipeline","inputs":{"x":{"type":"uri_file","path":"azureml:iris:9"}},"jobs":{"s":{"type":"command","command":"cat ${{inputs.x}}","compute":"cpu","inputs":{"x":"${{parent.inputs.x}}"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = h.svc.SubmitPipeline(h.ctx, ws, p)
	if err == nil || !strings.Contains(core.ErrorMessage(err), `has no version 9`) {
		t.Errorf("pipeline with a missing version: %v", err)
	}
}

const dsSecret = "s3cr3t-Aa0Bb1Cc2Dd3Ee4"

// The task carries each remote input's place with the owning datastore's
// credentials, and each output bound for another datastore; the job's
// JSON and events never hold the secret.
func TestTaskCarriesDataSourcesWithCredentials(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.createDatastore(`{"name":"lake","type":"s3","endpoint_url":"http://10.0.0.5:9000","bucket":"data","credentials":{"access_key_id":"AKID","secret_access_key":"` + dsSecret + `"}}`)
	h.createDatastore(`{"name":"blob","type":"azure_blob","account_name":"acct","container_name":"cont1","credentials":{"account_key":"` + dsSecret + `"}}`)
	up := h.upload("one file")
	upPath, err := asset.ArtifactDataPath(up, "")
	if err != nil {
		t.Fatal(err)
	}
	h.registerData("uploaded", "1", "uri_folder", upPath)
	h.registerData("onlake", "1", "uri_folder", "azureml://datastores/lake/paths/sets/a/")
	spec := dataJob("data1", map[string]*job.JobInput{
		"s3":    {Type: "uri_folder", Path: "azureml://datastores/lake/paths/raw/"},
		"asset": {Type: "uri_folder", Path: "azureml:onlake@latest", Mode: "download"},
		"up":    {Type: "uri_folder", Path: "azureml:uploaded:1"},
		"blob":  {Type: "uri_file", Path: "https://acct.blob.core.windows.net/cont1/x/y.csv"},
		"anon":  {Type: "uri_file", Path: "https://example.com/f.csv"},
		"n":     {Value: 3},
	})
	spec.Outputs = map[string]*job.JobOutput{
		"o":    {Type: "uri_folder", Path: "azureml://datastores/lake/paths/out/${{name}}/${{output_name}}/"},
		"kept": {Type: "uri_folder"},
		// A uri_file output's command writes a file, named by its path.
		"report":   {Type: "uri_file", Path: "azureml://datastores/lake/paths/reports/${{name}}.txt"},
		"keptfile": {Type: "uri_file"},
	}
	h.submitSpec(spec)
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(n)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks", len(tasks))
	}
	task := tasks[0]
	src := task.InputSources
	if s := src["s3"]; s == nil || s.Kind != node.DataS3 || s.ServiceURL != "http://10.0.0.5:9000" || s.Container != "data" || s.Prefix != "raw/" ||
		s.Region != "us-east-1" || !s.AllowHTTP || s.Datastore != "lake" || s.Credentials == nil || s.Credentials.SecretAccessKey != dsSecret {
		t.Errorf("s3 input: %s", dataJSON(t, s))
	}
	if s := src["asset"]; s == nil || s.Kind != node.DataS3 || s.Prefix != "sets/a/" || s.Asset != "onlake:1" || s.Credentials == nil {
		t.Errorf("asset input: %s", dataJSON(t, s))
	}
	if s := src["up"]; s == nil || s.Kind != node.DataShoal || s.Artifact != up || s.Asset != "uploaded:1" || s.Credentials != nil {
		t.Errorf("uploaded asset input: %s", dataJSON(t, s))
	}
	if s := src["blob"]; s == nil || s.Kind != node.DataAzureBlob || s.ServiceURL != "https://acct.blob.core.windows.net" || s.Container != "cont1" || s.Prefix != "x/y.csv" || s.Credentials == nil || s.Credentials.AccountKey != dsSecret {
		t.Errorf("blob URL input: %s", dataJSON(t, s))
	}
	if s := src["anon"]; s == nil || s.Kind != node.DataHTTP || s.ServiceURL != "https://example.com/f.csv" || s.Credentials != nil {
		t.Errorf("URL input: %s", dataJSON(t, s))
	}
	if _, ok := src["n"]; ok {
		t.Errorf("a literal got a source")
	}
	if o := task.OutputTargets["o"]; o == nil || o.Kind != node.DataS3 || o.Prefix != "out/data1/o/" || o.Credentials == nil {
		t.Errorf("output target: %s", dataJSON(t, o))
	}
	if got := task.OutputFiles; len(got) != 2 || got["report"] != "data1.txt" || got["keptfile"] != "keptfile" {
		t.Errorf("output files = %v, want report: data1.txt, keptfile: keptfile", got)
	}
	if _, ok := task.OutputTargets["kept"]; ok {
		t.Errorf("an output kept by the server got a target")
	}
	// The node may read the upload the asset stands for.
	if f, err := h.svc.OpenArtifactForNode(h.ctx, n, up); err != nil {
		t.Errorf("the node cannot read the asset's upload: %v", err)
	} else {
		f.Close()
	}
	// Attack: the secret is in no job JSON, event or listing.
	h.report(n, task, node.RankRunning, nil)
	h.finish(n, task, node.RankCompleted)
	j, _ := h.svc.FindJob(h.ctx, ws, "data1")
	evs, err := h.svc.ListJobEvents(h.ctx, ws, "data1")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := h.svc.ListJobs(h.ctx, job.JobFilter{Workspace: ws})
	for what, v := range map[string]any{"job": j, "events": evs, "list": list} {
		if b := dataJSON(t, v); strings.Contains(b, dsSecret) {
			t.Errorf("the datastore's secret is in the %s: %s", what, b)
		}
	}
}

// A datastore deleted between submission and placement fails the job at
// once (input_failed, the reason naming it), spending no retry and
// losing no node.
func TestDeletedDatastoreFailsTheJobAtOnce(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.createDatastore(`{"name":"lake","type":"s3","endpoint_url":"http://10.0.0.5:9000","bucket":"data"}`)
	spec := dataJob("gone", map[string]*job.JobInput{"d": {Type: "uri_folder", Path: "azureml://datastores/lake/paths/raw/"}})
	three := 3
	spec.Retries = &three
	h.submitSpec(spec)
	if err := datastores.New(datastores.Config{Store: h.store, SecretsKey: h.secretsKey}).Delete(h.ctx, ws, "lake"); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	if tasks := h.syncStart(n); len(tasks) != 0 {
		t.Fatalf("the node was handed %s", describeTasks(tasks))
	}
	j := h.wantJob("gone", job.JobFailed)
	if !strings.Contains(j.Error, "input d") || !strings.Contains(j.Error, "datastore lake is not in workspace") {
		t.Errorf("error %q", j.Error)
	}
	if j.AttemptCount != 1 {
		t.Errorf("%d attempts, want 1: no retry spent", j.AttemptCount)
	}
	a := h.attempts("gone")
	if len(a) != 1 || a[0].Ranks[0].Failure != node.RankInputFailed {
		t.Errorf("attempts: %s", dataJSON(t, a))
	}
	if nd := h.mustNode("cpu", n); nd.State != node.NodeIdle || nd.CurrentAttemptID != "" {
		t.Errorf("node %s is %s on %q", n, nd.State, nd.CurrentAttemptID)
	}
}

// Outputs with name: are registered when the job completes: data assets
// for uri_* outputs, models for model types, at the output's datastore
// path, created by the job's submitter; a refused registration fails the
// job with its words.
func TestNamedOutputsRegisterOnCompletion(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	spec := dataJob("train", nil)
	spec.Outputs = map[string]*job.JobOutput{
		"prepared":  {Type: "uri_folder", Name: "prepared"},
		"model":     {Type: "mlflow_model", Name: "clf", Version: "7"},
		"plain":     {Type: "uri_folder"},
		"elsewhere": {Type: "uri_file", Name: "report", Path: "azureml://datastores/workspaceblobstore/paths/reports/${{name}}.txt"},
	}
	h.submitSpec(spec)
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	task := h.start(n)
	if err := h.files.PutOutputs(ws, "train", task.Attempt, 0, bytes.NewReader(packed(t, map[string]string{"prepared/p.txt": "rows"})), 1<<20); err != nil {
		t.Fatal(err)
	}
	h.finish(n, task, node.RankCompleted)
	j := h.wantJob("train", job.JobCompleted)
	if shown, _ := h.svc.FindJob(h.ctx, ws, "train"); shown.Outputs["plain"].Path != "azureml://datastores/workspaceblobstore/paths/azureml/train/plain/" {
		t.Errorf("job show tells output plain at %q, want its datastore path", shown.Outputs["plain"].Path)
	}
	d, err := dataassets.New(dataassets.Config{Store: h.store}).Get(h.ctx, ws, "prepared", "1", "")
	if err != nil || d.Path != "azureml://datastores/workspaceblobstore/paths/azureml/train/prepared/" || d.Type != "uri_folder" || d.CreatedBy != j.CreatedBy {
		t.Errorf("data asset: %+v %v", d, err)
	}
	m, err := models.New(models.Config{Store: h.store}).Get(h.ctx, ws, "clf", "7", "")
	if err != nil || m.Type != "mlflow_model" || m.Path != "azureml://datastores/workspaceblobstore/paths/azureml/train/model/" {
		t.Errorf("model: %+v %v", m, err)
	}
	// Shoal keeps an output on its own datastore as the job's output,
	// and registers it where it is read back.
	if r, err := dataassets.New(dataassets.Config{Store: h.store}).Get(h.ctx, ws, "report", "1", ""); err != nil || r.Path != "azureml://datastores/workspaceblobstore/paths/azureml/train/elsewhere/" {
		t.Errorf("report: %+v %v", r, err)
	}
	evs, _ := h.svc.ListJobEvents(h.ctx, ws, "train")
	if b := dataJSON(t, evs); !strings.Contains(b, "registered as model clf:7") {
		t.Errorf("events: %s", b)
	}

	// A later job whose input is the registered output reads it from
	// the first job's kept output.
	h.submitSpec(dataJob("use", map[string]*job.JobInput{"p": {Type: "uri_folder", Path: "azureml:prepared@latest"}}))
	h.step(0)
	t2 := h.syncStart(n)
	if len(t2) != 1 {
		t.Fatalf("%d tasks", len(t2))
	}
	if s := t2[0].InputSources["p"]; s == nil || s.Kind != node.DataShoal || s.OutputOf != "train" || s.Output != "prepared" {
		t.Errorf("kept-output input: %s", dataJSON(t, s))
	}
	// The node reads it through the agent API, while its rank runs.
	f, err := h.svc.OpenInputForNode(h.ctx, n, t2[0].AttemptID, 0, "p")
	if err != nil {
		t.Fatalf("the node cannot read its input: %v", err)
	}
	if got := unpacked(t, f, "p.txt"); got != "rows" {
		t.Errorf("input p.txt = %q", got)
	}
	if _, err := h.svc.OpenInputForNode(h.ctx, n, t2[0].AttemptID, 0, "nope"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("an input the job lacks: %v", err)
	}
	h.report(n, t2[0], node.RankRunning, nil)
	h.finish(n, t2[0], node.RankCompleted)
	if _, err := h.svc.OpenInputForNode(h.ctx, n, t2[0].AttemptID, 0, "p"); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("an ended rank's node read its input: %v", err)
	}

	// Version 7 of clf exists with another path: the next job's
	// registration is refused, and that job fails saying so.
	spec = dataJob("again", nil)
	spec.Outputs = map[string]*job.JobOutput{"model": {Type: "mlflow_model", Name: "clf", Version: "7"}}
	h.submitSpec(spec)
	h.step(0)
	task = h.start(n)
	h.finish(n, task, node.RankCompleted)
	j = h.wantJob("again", job.JobFailed)
	if !strings.Contains(j.Error, "output model could not be registered as clf:7") || !strings.Contains(j.Error, "already has version 7") {
		t.Errorf("error %q", j.Error)
	}

	// All or none: an output registered before the refused one (outputs
	// are registered in name order) is not left behind by the failed job.
	completing := func(name string, outputs map[string]*job.JobOutput) *job.Job {
		spec := dataJob(name, nil)
		spec.Outputs = outputs
		h.submitSpec(spec)
		h.step(0)
		task := h.start(n)
		h.finish(n, task, node.RankCompleted)
		return h.wantJob(name, job.JobFailed)
	}
	completing("half", map[string]*job.JobOutput{
		"a_first": {Type: "uri_folder", Name: "half-first", Version: "1"},
		"model":   {Type: "mlflow_model", Name: "clf", Version: "7"},
	})
	if d, err := dataassets.New(dataassets.Config{Store: h.store}).Get(h.ctx, ws, "half-first", "1", ""); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a failed job's earlier output stayed registered: %+v %v", d, err)
	}

	// Two outputs of one job registering one version with two paths: the
	// second is refused by the dry run as the store would refuse it.
	if j := completing("twice", map[string]*job.JobOutput{
		"one": {Type: "uri_folder", Name: "twice", Version: "1"},
		"two": {Type: "uri_folder", Name: "twice", Version: "1"},
	}); !strings.Contains(j.Error, "output two could not be registered") {
		t.Errorf("error %q", j.Error)
	}
	if d, err := dataassets.New(dataassets.Config{Store: h.store}).Get(h.ctx, ws, "twice", "1", ""); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("registered: %+v %v", d, err)
	}
}

func dataJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A rank fetching its inputs reports its progress as Preparing, shown
// as an image pull's is; the agent's input_failed (a refused credential,
// a source unreachable), even one it reports as a loss, fails the job
// at once with the source's words, spending no retry and losing no node.
func TestInputFetchProgressAndFailure(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	retries := 2
	spec := dataJob("fetches", map[string]*job.JobInput{"d": {Type: "uri_file", Path: "https://example.com/big.bin"}})
	spec.Retries = &retries
	h.submitSpec(spec)
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(n)
	if len(tasks) != 1 {
		t.Fatalf("tasks %s", describeTasks(tasks))
	}
	task := tasks[0]
	send := func(rep *node.RankReport) {
		t.Helper()
		if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, rep); err != nil {
			t.Fatalf("report %+v: %v", rep, err)
		}
	}
	for _, mb := range []int{10, 50} {
		send(&node.RankReport{State: node.RankPreparing, Reason: fmt.Sprintf("fetching input d: %d of 100 MB", mb)})
	}
	j := h.wantJob("fetches", job.JobPreparing)
	if want := "attempt 1 preparing: fetching input d: 50 of 100 MB"; j.StatusReason != want {
		t.Errorf("job reason %q, want %q", j.StatusReason, want)
	}
	if c := h.countJobEvents("fetches", "fetching"); c != 1 {
		t.Errorf("%d fetching events, want 1", c)
	}
	send(&node.RankReport{State: node.RankLost, Failure: node.RankInputFailed, Reason: "input d: GET https://example.com/big.bin: 403 Forbidden"})
	j = h.wantJob("fetches", job.JobFailed)
	if !strings.Contains(j.Error, "403 Forbidden") || j.FailedAttempts != 0 || j.AttemptCount != 1 {
		t.Errorf("job error %q, failed attempts %d, attempts %d: want the source's words, no retry, no requeue", j.Error, j.FailedAttempts, j.AttemptCount)
	}
	if nd := h.mustNode("cpu", n); nd.State != node.NodeIdle {
		t.Errorf("node %s is %s after an input failure, want idle", n, nd.State)
	}
}

// Credentials that no longer open (the server's secrets key replaced
// since the datastore was created) fail the job at once as input_failed,
// naming the datastore and never the secret.
func TestUnopenableCredentialsFailTheJob(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.createDatastore(`{"name":"lake","type":"s3","endpoint_url":"http://10.0.0.5:9000","bucket":"data","credentials":{"access_key_id":"AKID","secret_access_key":"` + dsSecret + `"}}`)
	h.submitSpec(dataJob("locked", map[string]*job.JobInput{"d": {Type: "uri_folder", Path: "azureml://datastores/lake/paths/raw/"}}))
	other, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	h.bootWith(other)
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	if tasks := h.syncStart(n); len(tasks) != 0 {
		t.Fatalf("the node was handed %s", describeTasks(tasks))
	}
	j := h.wantJob("locked", job.JobFailed)
	if !strings.Contains(j.Error, "credentials of datastore lake cannot be opened") || strings.Contains(j.Error, dsSecret) || j.AttemptCount != 1 {
		t.Errorf("error %q after %d attempts", j.Error, j.AttemptCount)
	}
}

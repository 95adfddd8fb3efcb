package e2e_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/teststorage"
)

// TestDataEndToEnd runs issue 36's parts together for the first time,
// against real storage servers on private ports: versitygw (S3) and
// Azurite (Blob). Datastores with keys, data assets, models, job inputs
// in ro_mount and download mode, outputs written where the YAML says
// and registered as models, and the honest failures: a wrong secret, a
// loopback URL, a missing version. No secret shows anywhere a user or
// the server's log could read it.
func TestDataEndToEnd(t *testing.T) {
	t.Parallel()
	s3 := teststorage.StartS3(t)
	s3.Bucket(t, "datasets")
	obj := dirWriter(t, filepath.Join(s3.Dir, "datasets"))
	obj("in/a.txt", "alpha from s3\n")
	obj("in/sub/b.txt", "beta from s3\n")
	s3.Bucket(t, "other")
	web := teststorage.StartHTTP(t, map[string][]byte{"/iris.csv": []byte("from the web\n")})
	az := teststorage.StartAzurite(t)
	putBlobs(t, az, "blobdata", map[string]string{"iris/iris.csv": "sepal,petal\n5.1,1.4\n"})

	sasToken := containerSAS(t, az, "blobdata")
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "cpu", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	dir := t.TempDir()
	write := dirWriter(t, dir)
	wrongSecret := "wrong-secret-" + fmt.Sprint(time.Now().UnixNano())

	mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("s3.yml", fmt.Sprintf(
		"name: team_bucket\ntype: s3\nbucket: datasets\nendpoint_url: %s\ncredentials:\n  access_key_id: %s\n  secret_access_key: %s\n",
		s3.EndpointURL, s3.AccessKey, s3.SecretKey)))
	mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("s3bad.yml", fmt.Sprintf(
		"name: bad_bucket\ntype: s3\nbucket: other\nendpoint_url: %s\ncredentials:\n  access_key_id: %s\n  secret_access_key: %s\n",
		s3.EndpointURL, s3.AccessKey, wrongSecret)))
	mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("blob.yml", fmt.Sprintf(
		"name: emulated\ntype: azure_blob\naccount_name: %s\ncontainer_name: blobdata\nendpoint: %s\nprotocol: http\ncredentials:\n  account_key: %s\n",
		az.Account, az.ServiceURL, az.Key)))

	mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("blobsas.yml", fmt.Sprintf(
		"name: emulated_sas\ntype: azure_blob\naccount_name: %s\ncontainer_name: blobdata\nendpoint: %s\nprotocol: http\ncredentials:\n  sas_token: %s\n",
		az.Account, az.ServiceURL, sasToken)))

	var jobs []string
	finish := func(t *testing.T, name string) (jobView, string) {
		t.Helper()
		jobs = append(jobs, name)
		j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed", "Canceled")
		return j, jobLog(t, s, name)
	}

	t.Run("s3 datastore in and out", func(t *testing.T) {
		name := submitJob(t, s, write("s3job.yml", `command: cat ${{inputs.data}}/a.txt ${{inputs.data}}/sub/b.txt && (touch ${{inputs.data}}/mine 2>/dev/null && echo input-writable || echo input-read-only) && echo written > ${{outputs.result}}/result.txt
inputs:
  data:
    type: uri_folder
    mode: ro_mount
    path: azureml://datastores/team_bucket/paths/in/
outputs:
  result:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/out/${{name}}/
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if !strings.Contains(log, "alpha from s3") || !strings.Contains(log, "beta from s3") {
			t.Errorf("the job's log lacks the bucket's objects:\n%s", log)
		}
		if !strings.Contains(log, "input-read-only") {
			t.Errorf("a ro_mount input was writable:\n%s", log)
		}
		if _, err := os.Stat(filepath.Join(s3.Dir, "datasets", "in", "mine")); err == nil {
			t.Error("the job wrote into the bucket through its ro_mount input")
		}
		b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "out", name, "result.txt"))
		if err != nil || string(b) != "written\n" {
			t.Errorf("the output in the bucket at out/%s/result.txt: %q, %v", name, b, err)
		}
		if got := readDownloaded(download(t, s, name, "--output-name", "result"), "result/result.txt"); got != "written\n" {
			t.Errorf("job download --output-name result: result.txt = %q", got)
		}
	})

	t.Run("blob data asset download mode", func(t *testing.T) {
		mustRun(t, s.env, "data", "create", "-o", "none", "-f", write("iris.yml",
			"name: iris_blob\ntype: uri_folder\npath: azureml://datastores/emulated/paths/iris/\n"))
		name := submitJob(t, s, write("blobjob.yml", `command: cat ${{inputs.iris}}/iris.csv && touch ${{inputs.iris}}/mine && echo download-is-the-jobs
inputs:
  iris:
    type: uri_folder
    mode: download
    path: azureml:iris_blob@latest
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if !strings.Contains(log, "5.1,1.4") || !strings.Contains(log, "download-is-the-jobs") {
			t.Errorf("the job's log lacks the blob:\n%s", log)
		}
	})

	t.Run("local data asset to a model and back", func(t *testing.T) {
		write("local/rows.txt", "1\n2\n3\n")
		mustRun(t, s.env, "data", "create", "-o", "none", "-f", write("rows.yml", "name: rows\ntype: uri_folder\npath: ./local\n"))
		name := submitJob(t, s, write("train.yml", `command: cat ${{inputs.rows}}/rows.txt && awk '{s+=$1} END {print s}' ${{inputs.rows}}/rows.txt > ${{outputs.model}}/model.txt
inputs:
  rows:
    type: uri_folder
    path: azureml:rows:1
outputs:
  model:
    type: custom_model
    name: summer
    version: "1"
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if got := strings.TrimSpace(mustRun(t, s.env, "model", "show", "--name", "summer", "--version", "1", "--query", "type", "-o", "tsv")); got != "custom_model" {
			t.Errorf("model show summer:1 type = %q", got)
		}
		name = submitJob(t, s, write("score.yml", `command: echo model says $(cat ${{inputs.m}}/model.txt)
inputs:
  m:
    type: custom_model
    path: azureml:summer:1
compute: azureml:cpu
`))
		j, log = finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if !strings.Contains(log, "model says 6") {
			t.Errorf("the second job did not read the model:\n%s", log)
		}
	})

	t.Run("upload mode and uri_file output", func(t *testing.T) {
		name := submitJob(t, s, write("upjob.yml", `command: echo up > ${{outputs.folder}}/f.txt && echo one file > ${{outputs.report}}
outputs:
  folder:
    type: uri_folder
    mode: upload
    path: azureml://datastores/team_bucket/paths/up/${{name}}/${{output_name}}/
  report:
    type: uri_file
    path: azureml://datastores/team_bucket/paths/reports/${{name}}.txt
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "up", name, "folder", "f.txt")); err != nil || string(b) != "up\n" {
			t.Errorf("the upload output at up/%s/folder/f.txt: %q, %v", name, b, err)
		}
		if b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "reports", name+".txt")); err != nil || string(b) != "one file\n" {
			t.Errorf("the uri_file output at reports/%s.txt: %q, %v", name, b, err)
		}
		got := download(t, s, name, "--all")
		if readDownloaded(got, "folder/f.txt") != "up\n" {
			t.Errorf("job download --all lacks folder/f.txt")
		}
	})

	t.Run("sas token and a registered uri_file output read back", func(t *testing.T) {
		name := submitJob(t, s, write("sasjob.yml", `command: cp ${{inputs.iris}} ${{outputs.report}}
inputs:
  iris:
    type: uri_file
    path: azureml://datastores/emulated_sas/paths/iris/iris.csv
outputs:
  report:
    type: uri_file
    path: azureml://datastores/team_bucket/paths/reports/${{name}}.csv
    name: report
    version: "1"
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "reports", name+".csv")); err != nil || !strings.Contains(string(b), "5.1,1.4") {
			t.Errorf("the uri_file output at reports/%s.csv: %q, %v", name, b, err)
		}
		if got := strings.TrimSpace(mustRun(t, s.env, "data", "show", "--name", "report", "--version", "1", "--query", "[type, path]", "-o", "tsv")); got != "uri_file\nazureml://datastores/team_bucket/paths/reports/"+name+".csv" {
			t.Errorf("data show report:1 = %q", got)
		}
		name = submitJob(t, s, write("readreport.yml", `command: echo report has $(cat ${{inputs.r}})
inputs:
  r:
    type: uri_file
    path: azureml:report:1
compute: azureml:cpu
`))
		j, log = finish(t, name)
		if j.Status != "Completed" || !strings.Contains(log, "report has sepal,petal 5.1,1.4") {
			t.Errorf("reading the registered uri_file: %s; log:\n%s", j, log)
		}
	})

	t.Run("pipeline", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-o", "json", "-f", write("pipe.yml", `type: pipeline
settings:
  default_compute: azureml:cpu
inputs:
  raw:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/in/
outputs:
  copied:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/pipe/copied/
    name: copied
    version: "1"
jobs:
  copy:
    type: command
    command: cp ${{inputs.raw}}/a.txt ${{outputs.out}}/copy.txt
    inputs:
      raw: ${{parent.inputs.raw}}
    outputs:
      out: ${{parent.outputs.copied}}
`))
		jobs = append(jobs, p.Name)
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		if v := showPipeline(t, s, p.Name); v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		if b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "pipe", "copied", "copy.txt")); err != nil || string(b) != "alpha from s3\n" {
			t.Errorf("the pipeline's output at pipe/copied/copy.txt: %q, %v", b, err)
		}
		if got := strings.TrimSpace(mustRun(t, s.env, "data", "show", "--name", "copied", "--version", "1", "--query", "path", "-o", "tsv")); got != "azureml://datastores/team_bucket/paths/pipe/copied/" {
			t.Errorf("data show copied:1 path = %q", got)
		}
	})

	t.Run("nfs datastore and mltable", func(t *testing.T) {
		share := reachableDir(t, "shoal-e2e-nfs-")
		dirWriter(t, share)("sets/t1/MLTable", "paths:\n  - file: ./rows.csv\n")
		dirWriter(t, share)("sets/t1/rows.csv", "x\n1\n")
		mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("nfs.yml", "name: share\ntype: nfs\npath: "+share+"\n"))
		name := submitJob(t, s, write("nfsjob.yml", `command: cat ${{inputs.table}}/MLTable ${{inputs.plain}}/rows.csv
inputs:
  table:
    type: mltable
    mode: eval_mount
    path: azureml://datastores/share/paths/sets/t1/
  plain:
    type: uri_folder
    mode: download
    path: azureml://datastores/share/paths/sets/t1/
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Completed" || !strings.Contains(log, "file: ./rows.csv") || !strings.Contains(log, "x\n1") {
			t.Errorf("reading an nfs datastore: %s; log:\n%s", j, log)
		}
	})

	t.Run("nfs datastore gives no more than the job's own rights", func(t *testing.T) {
		// Attack: a datastore over a folder holding a file only root may
		// read; neither mode may hand it to the job's account.
		share := reachableDir(t, "shoal-e2e-nfs-")
		dirWriter(t, share)("private/open.txt", "open\n")
		secretFile := dirWriter(t, share)("private/root-only.txt", "root's secret\n")
		if err := os.Chmod(secretFile, 0o600); err != nil {
			t.Fatal(err)
		}
		mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("nfs2.yml", "name: privshare\ntype: nfs\npath: "+share+"\n"))
		for _, mode := range []string{"ro_mount", "download"} {
			name := submitJob(t, s, write("nfspriv-"+mode+".yml", `command: cat ${{inputs.d}}/open.txt; cat ${{inputs.d}}/root-only.txt; true
inputs:
  d:
    type: uri_folder
    mode: `+mode+`
    path: azureml://datastores/privshare/paths/private/
compute: azureml:cpu
`))
			j, log := finish(t, name)
			if strings.Contains(log, "root's secret") {
				t.Errorf("%s: the job read a file only root may read: %s; log:\n%s", mode, j, log)
			}
			switch mode {
			case "ro_mount": // the mount keeps the file's mode
				if j.Status != "Completed" || !strings.Contains(log, "open\n") || !strings.Contains(log, "Permission denied") {
					t.Errorf("ro_mount: %s; log:\n%s", j, log)
				}
			case "download": // the copy refuses what the job could not read
				if j.Status != "Failed" || !strings.Contains(j.StatusReason, "root-only.txt: the job's account may not read it") || rankFailures(t, s, name) != "input_failed" {
					t.Errorf("download: %s; log:\n%s", j, log)
				}
			}
		}
	})

	t.Run("output links lead nowhere", func(t *testing.T) {
		// Attack: the agent uploads as root; links the job leaves in an
		// output must not carry what they point at to the bucket.
		private := dirWriter(t, t.TempDir())("root-only.txt", "root's secret\n")
		if err := os.Chmod(private, 0o600); err != nil {
			t.Fatal(err)
		}
		name := submitJob(t, s, write("links.yml", `command: echo mine > ${{outputs.result}}/mine.txt && ln -s `+private+` ${{outputs.result}}/link.txt && ln -s `+filepath.Dir(private)+` ${{outputs.result}}/dirlink
outputs:
  result:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/links/${{name}}/
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Failed" || !strings.Contains(j.StatusReason, "a link may not leave the output's folder") || rankFailures(t, s, name) != "output_failed" {
			t.Errorf("an output with links out of it: %s; log:\n%s", j, log)
		}
		err := filepath.WalkDir(filepath.Join(s3.Dir, "datasets", "links"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), "root's secret") {
				t.Errorf("a link's target reached the bucket at %s", p)
			}
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
	})

	t.Run("URLs", func(t *testing.T) {
		// s3:// takes its credentials from the datastore that owns the
		// bucket; a plain http URL is read anonymously.
		name := submitJob(t, s, write("urljob.yml", fmt.Sprintf(`command: cat ${{inputs.bucket}}/a.txt ${{inputs.web}}
inputs:
  bucket:
    type: uri_folder
    mode: download
    path: s3://datasets/in/
  web:
    type: uri_file
    path: %s/iris.csv
compute: azureml:cpu
`, web.URL)))
		j, log := finish(t, name)
		if j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, log)
		}
		if !strings.Contains(log, "alpha from s3") || !strings.Contains(log, "from the web") {
			t.Errorf("the job's log lacks the URLs' contents:\n%s", log)
		}
	})

	t.Run("wrong secret fails at once", func(t *testing.T) {
		name := submitJob(t, s, write("badjob.yml", `command: ls ${{inputs.data}}
inputs:
  data:
    type: uri_folder
    path: azureml://datastores/bad_bucket/paths/in/
compute: azureml:cpu
`))
		j, log := finish(t, name)
		if j.Status != "Failed" || j.AttemptCount != 1 || j.InfraRequeues != 0 || j.FailedAttempts != 0 {
			t.Fatalf("a wrong secret: %s; log:\n%s", j, log)
		}
		if f := rankFailures(t, s, name); f != "input_failed" {
			t.Errorf("the rank's failure = %q, want input_failed", f)
		}
		if !strings.Contains(j.StatusReason+j.Error, "SignatureDoesNotMatch") {
			t.Errorf("the reason does not carry the server's words: %s", j)
		}
		for _, n := range listNodes(t, s, "cpu") {
			if strings.Contains(strings.ToLower(n.State), "lost") || strings.Contains(strings.ToLower(n.State), "unusable") {
				t.Errorf("a node was lost over the job's input: %+v", n)
			}
		}
	})

	t.Run("wrong account key and unreachable source fail at once", func(t *testing.T) {
		ip, err := teststorage.HostIP()
		if err != nil {
			t.Fatal(err)
		}
		closed := freeAddrOn(t, ip) // nothing listens there
		mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("blobbad.yml", fmt.Sprintf(
			"name: emulated_badkey\ntype: azure_blob\naccount_name: %s\ncontainer_name: blobdata\nendpoint: %s\nprotocol: http\ncredentials:\n  account_key: %s\n",
			az.Account, az.ServiceURL, "d3JvbmcgYWNjb3VudCBrZXkgZm9yIHRoZSB0ZXN0")))
		mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("s3gone.yml", fmt.Sprintf(
			"name: gone_bucket\ntype: s3\nbucket: datasets\nendpoint_url: http://%s\n", closed)))
		for ds, words := range map[string]string{"emulated_badkey": "403", "gone_bucket": "refused"} {
			name := submitJob(t, s, write(ds+".yml", `command: ls ${{inputs.d}}
inputs:
  d:
    type: uri_folder
    path: azureml://datastores/`+ds+`/paths/iris/
compute: azureml:cpu
`))
			j, log := finish(t, name)
			if j.Status != "Failed" || j.AttemptCount != 1 || j.InfraRequeues != 0 || !strings.Contains(j.StatusReason, words) || rankFailures(t, s, name) != "input_failed" {
				t.Errorf("%s: %s; want Failed at once with %q; log:\n%s", ds, j, words, log)
			}
		}
	})

	t.Run("loopback url refused", func(t *testing.T) {
		file := write("loop.yml", fmt.Sprintf(`command: cat ${{inputs.x}}
inputs:
  x:
    type: uri_file
    path: http://127.0.0.1:%s/x
compute: azureml:cpu
`, strings.TrimPrefix(s.addr, "127.0.0.1:")))
		name := submitJob(t, s, file)
		j, log := finish(t, name)
		if j.Status != "Failed" || !strings.Contains(j.StatusReason, "input x (http://127.0.0.1:") || !strings.Contains(j.StatusReason, "refused: it is one of Shoal's own endpoints") {
			t.Errorf("the server's own address as an input: %s; log:\n%s", j, log)
		}
		if f := rankFailures(t, s, name); f != "input_failed" {
			t.Errorf("the rank's failure = %q, want input_failed", f)
		}
		// Any other port of the loopback: refused as the loopback.
		name = submitJob(t, s, write("loop2.yml", `command: cat ${{inputs.x}}
inputs:
  x:
    type: uri_file
    path: http://127.0.0.1:9/x
compute: azureml:cpu
`))
		j, log = finish(t, name)
		if j.Status != "Failed" || !strings.Contains(j.StatusReason, "loopback") {
			t.Errorf("a loopback URL input: %s; log:\n%s", j, log)
		}
	})

	t.Run("missing version refused at submission", func(t *testing.T) {
		_, stderr, code := run(t, s.env, "job", "create", "-o", "none", "-f", write("missing.yml", `command: ls ${{inputs.iris}}
inputs:
  iris:
    type: uri_folder
    path: azureml:iris_blob:9
compute: azureml:cpu
`))
		if code == 0 || !strings.Contains(stderr, "inputs.iris") || !strings.Contains(stderr, "9") {
			t.Errorf("a missing version: exit %d, %q; want refused naming inputs.iris", code, stderr)
		}
	})

	t.Run("no secret anywhere", func(t *testing.T) {
		sig := ""
		for _, kv := range strings.Split(sasToken, "&") {
			if v, ok := strings.CutPrefix(kv, "sig="); ok {
				sig = v
			}
		}
		if sig == "" {
			t.Fatalf("the SAS token %.10s... has no signature", sasToken)
		}
		plainSig, err := url.QueryUnescape(sig)
		if err != nil {
			t.Fatal(err)
		}
		secrets := []string{s3.SecretKey, wrongSecret, az.Key, sig, plainSig}
		var seen []string
		for _, name := range jobs {
			seen = append(seen, mustRun(t, s.env, "job", "show", "-n", name, "-o", "json"))
			seen = append(seen, mustRun(t, s.env, "job", "events", "-n", name, "-o", "json"))
			stdout, _, _ := run(t, s.env, "job", "stream", "-n", name)
			seen = append(seen, stdout)
		}
		for _, ds := range []string{"team_bucket", "bad_bucket", "emulated", "emulated_sas"} {
			seen = append(seen, mustRun(t, s.env, "datastore", "show", ds, "-o", "json"))
		}
		seen = append(seen, s.log())
		agentLogs, _ := filepath.Glob(filepath.Join(s.nodesDir, "*", "agent.log"))
		if len(agentLogs) == 0 {
			t.Error("no agent log to check")
		}
		for _, p := range agentLogs {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, string(b))
		}
		for _, text := range seen {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("a secret %.6s... shows in:\n%.2000s", secret, text)
				}
			}
		}
		if len(jobs) < 5 {
			t.Errorf("only %d jobs ran; the secret check needs them all", len(jobs))
		}
	})
}

// rankFailures is the failure classes of the job's ranks, joined.
func rankFailures(t *testing.T, s *server, name string) string {
	t.Helper()
	var got []string
	for _, a := range runJSON[[]struct {
		Ranks []struct {
			Failure string `json:"failure"`
		} `json:"ranks"`
	}](t, s.env, "job", "list-attempts", "-n", name, "-o", "json") {
		for _, r := range a.Ranks {
			got = append(got, r.Failure)
		}
	}
	return strings.Join(got, ",")
}

// containerSAS is a read and list SAS token for the container, signed
// with the account key, as a user would make one to share it.
func containerSAS(t *testing.T, az *teststorage.Azurite, container string) string {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(az.Account, az.Key)
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(24 * time.Hour).UTC(),
		Permissions:   (&sas.ContainerPermissions{Read: true, List: true}).String(),
		ContainerName: container,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// putBlobs makes a container on Azurite and uploads blobs into it with
// the account key, as a user's own tools would.
func putBlobs(t *testing.T, az *teststorage.Azurite, container string, blobs map[string]string) {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(az.Account, az.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(az.ServiceURL+"/", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, container, nil); err != nil {
		t.Fatalf("create container %s: %v", container, err)
	}
	for k, v := range blobs {
		if _, err := c.UploadBuffer(ctx, container, k, []byte(v), nil); err != nil {
			t.Fatalf("upload %s: %v", k, err)
		}
	}
}

// TestDataInContainer: a job in a container (real podman) reads an S3
// datastore folder through a read-only volume and a Blob file by
// download, and writes an output to the bucket.
func TestDataInContainer(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	image := env.Registry.Addr + "/" + testctr.PushedBase
	s3 := teststorage.StartS3(t)
	s3.Bucket(t, "datasets")
	obj := dirWriter(t, filepath.Join(s3.Dir, "datasets"))
	obj("in/a.txt", "alpha in a container\n")
	s := startServer(t, serverOpts{Config: fastJobsConfig, Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}})
	createCluster(t, s, "ctr-data", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	dir := t.TempDir()
	write := dirWriter(t, dir)
	mustRun(t, s.env, "datastore", "create", "-o", "none", "-f", write("s3.yml", fmt.Sprintf(
		"name: team_bucket\ntype: s3\nbucket: datasets\nendpoint_url: %s\ncredentials:\n  access_key_id: %s\n  secret_access_key: %s\n",
		s3.EndpointURL, s3.AccessKey, s3.SecretKey)))
	name := submitJob(t, s, write("job.yml", fmt.Sprintf(`command: cat ${{inputs.data}}/a.txt && (touch ${{inputs.data}}/mine 2>/dev/null && echo input-writable || echo input-read-only) && cat ${{inputs.copy}}/a.txt > ${{outputs.result}}/copy.txt && test -e /run/.containerenv && echo in-a-container
inputs:
  data:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/in/
  copy:
    type: uri_folder
    mode: download
    path: azureml://datastores/team_bucket/paths/in/
outputs:
  result:
    type: uri_folder
    path: azureml://datastores/team_bucket/paths/ctr/${{name}}/
compute: azureml:ctr-data
environment:
  image: %s
`, image)))
	j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed", "Canceled")
	log := jobLog(t, s, name)
	if j.Status != "Completed" {
		t.Fatalf("%s; log:\n%s", j, log)
	}
	if !strings.Contains(log, "alpha in a container") || !strings.Contains(log, "input-read-only") || !strings.Contains(log, "in-a-container") {
		t.Errorf("the container's log: want the object read and the input read-only:\n%s", log)
	}
	if b, err := os.ReadFile(filepath.Join(s3.Dir, "datasets", "ctr", name, "copy.txt")); err != nil || string(b) != "alpha in a container\n" {
		t.Errorf("the output in the bucket at ctr/%s/copy.txt: %q, %v", name, b, err)
	}
	for _, text := range []string{mustRun(t, s.env, "job", "show", "-n", name, "-o", "json"), log, s.log()} {
		if strings.Contains(text, s3.SecretKey) {
			t.Errorf("the secret shows in:\n%.2000s", text)
		}
	}
}

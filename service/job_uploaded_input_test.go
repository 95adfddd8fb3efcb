package service_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/blobs"
)

// A place on workspaceblobstore that Azure's clients wrote through the
// Blob endpoint (what azure-ai-ml's ml_client.data uploads a local file
// to) is a job's input: a file or a folder, read by the node through
// the agent API as one archive. A place that holds nothing is refused at
// submission; another workspace's blobs are not this one's.
func TestInputFromBlobsUploadedThroughTheBlobEndpoint(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	b := blobs.New(blobs.Config{Store: h.store, Files: h.files, Put: func(_ context.Context, ws string, r io.Reader, max int64) (string, error) {
		return h.files.PutArtifact(ws, r, max)
	}})
	for name, body := range map[string]string{
		"LocalUpload/abc/iris.csv":        "sepal_length\n5.1\n",
		"LocalUpload/def/set/train.csv":   "train\n",
		"LocalUpload/def/set/sub/val.csv": "val\n",
		"LocalUpload/def/settled.txt":     "not the folder's\n",
	} {
		if _, err := b.PutBlob(h.ctx, ws, "workspaceblobstore", name, blobs.Upload{Body: strings.NewReader(body), Length: int64(len(body))}, blobs.Props{}, ""); err != nil {
			t.Fatal(err)
		}
	}
	h.submitSpec(dataJob("reads", map[string]*job.JobInput{
		"file":   {Type: "uri_file", Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/abc/iris.csv"},
		"folder": {Type: "uri_folder", Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/def/set/"},
	}))
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(n)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks", len(tasks))
	}
	if s := tasks[0].InputSources["file"]; s == nil || s.Kind != node.DataShoal || s.Container != "workspaceblobstore" {
		t.Fatalf("the file's source: %s", dataJSON(t, s))
	}
	f, err := h.svc.OpenInputForNode(h.ctx, n, tasks[0].AttemptID, 0, "file")
	if err != nil {
		t.Fatal(err)
	}
	if got := unpacked(t, f, "iris.csv"); got != "sepal_length\n5.1\n" {
		t.Errorf("file input: %q", got)
	}
	f, err = h.svc.OpenInputForNode(h.ctx, n, tasks[0].AttemptID, 0, "folder")
	if err != nil {
		t.Fatal(err)
	}
	if got := unpacked(t, f, "sub/val.csv"); got != "val\n" {
		t.Errorf("folder input sub/val.csv: %q", got)
	}

	// A place that holds nothing fails its job at once when the task is
	// handed over, in Shoal's words, as a missing object of any
	// datastore does; the node runs nothing for it.
	h.report(n, tasks[0], node.RankRunning, nil)
	h.finish(n, tasks[0], node.RankCompleted)
	h.submitSpec(dataJob("nothing", map[string]*job.JobInput{
		"gone": {Type: "uri_folder", Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/zzz/"},
	}))
	h.step(0)
	if tasks := h.syncStart(n); len(tasks) != 0 {
		t.Errorf("the node got %d tasks for a job whose input holds nothing", len(tasks))
	}
	if j := h.wantJob("nothing", job.JobFailed); !strings.Contains(j.Error, "holds nothing") {
		t.Errorf("error %q", j.Error)
	}
}

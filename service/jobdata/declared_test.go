package jobdata

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// A path on workspaceblobstore that a job declared as its output
// (Azure's distributed-cifar10 notebook: .../paths/CIFAR-10, in the long
// form) reads that job's kept output: the newest completed job's, a path
// inside it as the prefix. A running or failed job's declaration, another
// workspace's job, a path no job declared, or only a prefix of a
// declared path's segment find nothing.
func TestDeclaredOutputSource(t *testing.T) {
	db, _ := teststore.Open(t)
	declared := "azureml://subscriptions/s/resourcegroups/rg/workspaces/ws/datastores/workspaceblobstore/paths/CIFAR-10"
	err := db.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "other", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		for i, j := range []struct {
			ws, name, status string
		}{{"ws", "old", job.JobCompleted}, {"ws", "new", job.JobCompleted}, {"ws", "running", job.JobRunning},
			{"ws", "failed", job.JobFailed}, {"other", "theirs", job.JobCompleted}} {
			path := declared
			if j.ws == "other" {
				path = "azureml://datastores/workspaceblobstore/paths/theirs"
			}
			if err := tx.InsertJob(&job.Job{Workspace: j.ws, Status: j.status, CreatedOn: tx.Now(), Version: 1, Seq: int64(i + 1), JobSpec: job.JobSpec{
				Name: j.name, Command: "true", Outputs: map[string]*job.JobOutput{"cifar": {Type: job.InputTypeURIFolder, Path: path}}}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	notFound := core.Errorf(core.ENOTFOUND, "holds nothing")
	find := func(p string) (*node.DataSource, error) {
		var src *node.DataSource
		err := db.View(context.Background(), func(tx store.Tx) error {
			u, err := asset.ParseDataURI(p)
			if err != nil {
				return err
			}
			src, err = declaredOutputSource(tx, "ws", u, notFound)
			return err
		})
		return src, err
	}
	for p, prefix := range map[string]string{
		declared:                     "",
		declared + "/":               "",
		declared + "/batches/data_1": "batches/data_1",
		"azureml://datastores/workspaceblobstore/paths/CIFAR-10/x/": "x",
	} {
		src, err := find(p)
		if err != nil || src.OutputOf != "new" || src.Output != "cifar" || src.Prefix != prefix || src.Kind != node.DataShoal {
			t.Errorf("%s: %+v, %v; want job new's output cifar, prefix %q", p, src, err, prefix)
		}
	}
	for _, p := range []string{
		"azureml://datastores/workspaceblobstore/paths/CIFAR-100",
		"azureml://datastores/workspaceblobstore/paths/CIFAR",
		"azureml://datastores/workspaceblobstore/paths/theirs",
		"azureml://datastores/workspaceartifactstore/paths/CIFAR-10",
		"azureml://datastores/workspaceblobstore/paths/",
	} {
		if src, err := find(p); err != notFound {
			t.Errorf("%s: %+v, %v; want nothing found", p, src, err)
		}
	}
}

// Attack: an input (a batch endpoint's --input among them) naming
// another workspace's datastore in the long form is refused when the job
// is submitted, naming the field, Shoal's built-in datastores included:
// workspaceblobstore of workspace "other" is not this workspace's.
func TestInputOfAnotherWorkspaceRefused(t *testing.T) {
	db, _ := teststore.Open(t)
	for _, p := range []string{
		"azureml://subscriptions/s/resourcegroups/rg/workspaces/other/datastores/workspaceblobstore/paths/x/",
		"azureml://subscriptions/s/resourcegroups/rg/workspaces/other/datastores/mydata/paths/x/",
	} {
		err := db.View(context.Background(), func(tx store.Tx) error {
			return ResolveInputAssets(tx, "ws", "inputs", map[string]*job.JobInput{"input_data": {Type: job.InputTypeURIFolder, Path: p}})
		})
		if e, ok := err.(*core.Error); !ok || e.Code != core.EINVALID || e.Field != "inputs.input_data.path" {
			t.Errorf("%s: %v, want EINVALID on inputs.input_data.path", p, err)
		}
	}
	err := db.View(context.Background(), func(tx store.Tx) error {
		return ResolveInputAssets(tx, "ws", "inputs", map[string]*job.JobInput{"input_data": {Type: job.InputTypeURIFolder,
			Path: "azureml://subscriptions/s/resourcegroups/rg/workspaces/WS/datastores/workspaceblobstore/paths/x/"}})
	})
	if err != nil {
		t.Errorf("the workspace's own built-in datastore in the long form: %v", err)
	}
}

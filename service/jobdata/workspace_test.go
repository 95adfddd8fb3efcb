package jobdata

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

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

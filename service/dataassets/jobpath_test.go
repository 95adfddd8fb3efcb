package dataassets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/models"
	"github.com/shoal-ml/shoal/store"
)

// A model or data asset registered from a job's output
// (azureml://jobs/<job>/outputs/<output>/paths/<p>, as Azure's notebooks
// register a sweep's best model) records the place that job keeps it:
// its artifacts, or the path of the named output. A job of another
// workspace, a job or output that does not exist, a path inside a file
// output or out of the output is refused naming path, and nothing is
// stored.
func TestRegisterFromJobOutput(t *testing.T) {
	stores, _, ctx := teststore.Assets(t)
	err := stores.Store.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "other", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		for _, j := range []*job.Job{
			{Workspace: "ws", JobSpec: job.JobSpec{Name: "train", Command: "true", Outputs: map[string]*job.JobOutput{
				"model_output": {Type: job.InputTypeURIFolder},
				"scores":       {Type: "uri_file", Path: "azureml://datastores/team/paths/runs/${{name}}/scores.csv"},
				// A path of its own on Shoal's workspaceblobstore: kept as
				// the job's output, at azureml/<job>/<output>/.
				"cifar": {Type: job.InputTypeURIFolder, Path: "azureml://subscriptions/s/resourcegroups/rg/workspaces/ws/datastores/workspaceblobstore/paths/CIFAR-10"},
			}}},
			{Workspace: "other", JobSpec: job.JobSpec{Name: "secret", Command: "true"}},
		} {
			j.Status, j.CreatedOn, j.Version = job.JobCompleted, tx.Now(), 1
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	msvc, dsvc := models.New(stores), dataassets.New(stores)
	for in, want := range map[string]string{
		"azureml://jobs/train/outputs/artifacts/paths/outputs/model/": job.ArtifactsPath("train") + "outputs/model/",
		"azureml://jobs/train/outputs/model_output/paths/mlmodel/":    "azureml://datastores/workspaceblobstore/paths/azureml/train/model_output/mlmodel/",
		"azureml://jobs/train/outputs/model_output":                   "azureml://datastores/workspaceblobstore/paths/azureml/train/model_output/",
		"azureml://jobs/train/outputs/cifar/paths/batches/":           "azureml://datastores/workspaceblobstore/paths/azureml/train/cifar/batches/",
	} {
		m, _, err := msvc.Create(ctx, &asset.Model{Workspace: "ws", Name: "m", Type: "custom_model", Path: in})
		if err != nil || m.Path != want {
			t.Errorf("model from %s: %+v, %v; want path %s", in, m, err, want)
		}
	}
	d, _, err := dsvc.Create(ctx, &asset.Data{Workspace: "ws", Name: "scores", Type: "uri_file", Path: "azureml://jobs/train/outputs/scores"})
	if want := "azureml://datastores/team/paths/runs/train/scores.csv"; err != nil || d.Path != want {
		t.Errorf("data from a file output: %+v, %v; want path %s", d, err, want)
	}
	for in, words := range map[string]string{
		"azureml://jobs/secret/outputs/artifacts/paths/outputs/": "does not hold",
		"azureml://jobs/nope/outputs/artifacts":                  "does not hold",
		"azureml://jobs/train/outputs/missing/paths/a":           "has no output missing",
		"azureml://jobs/train/outputs/scores/paths/a":            "is a file",
		"azureml://jobs/train/outputs/artifacts/paths/../../x/":  "'..'",
	} {
		_, _, err := msvc.Create(ctx, &asset.Model{Workspace: "ws", Name: "bad", Type: "custom_model", Path: in})
		if core.ErrorField(err) != "path" || !strings.Contains(core.ErrorMessage(err), words) {
			t.Errorf("model from %s: %v; want refused naming path with %q", in, err, words)
		}
	}
	if list, _ := msvc.List(ctx, asset.AssetFilter{Workspace: "ws", Name: "bad", Archived: true}); len(list) != 0 {
		t.Errorf("refused registrations stored %d versions", len(list))
	}
	// The other workspace's job is refused in the words of a job that
	// does not exist: a URI tells nothing of another workspace.
	_, _, e1 := msvc.Create(ctx, &asset.Model{Workspace: "ws", Name: "bad", Type: "custom_model", Path: "azureml://jobs/secret/outputs/artifacts"})
	_, _, e2 := msvc.Create(ctx, &asset.Model{Workspace: "ws", Name: "bad", Type: "custom_model", Path: "azureml://jobs/nope/outputs/artifacts"})
	if strings.ReplaceAll(core.ErrorMessage(e1), "secret", "nope") != core.ErrorMessage(e2) {
		t.Errorf("another workspace's job: %v; a missing job: %v; want the same words", e1, e2)
	}
}

package assettest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Batch endpoints and deployments read back as written per workspace and
// endpoint (names compared case-insensitively); putting a name again
// replaces it; deleting an endpoint deletes its deployments, and
// deleting a workspace deletes both; what is not there is ENOTFOUND.
func testBatchEndpoints(t *testing.T, s store.Store, clock *stcheck.Clock) {
	three := 3
	ep := &batch.Endpoint{Workspace: "WS", Name: "Mnist-Batch", Description: "d", AuthMode: "aad_token", Tags: map[string]string{"a": "b"},
		Defaults: &batch.Defaults{DeploymentName: "torch"}, CreatedBy: "alice"}
	dep := &batch.Deployment{Workspace: "WS", Name: "torch", EndpointName: "Mnist-Batch", Type: batch.TypeModel, Model: "azureml:m:1",
		CodeConfiguration: batch.CodeConfiguration{Code: "azureml:c:1", ScoringScript: "s.py"}, Compute: "cpu",
		Resources: &job.JobResources{InstanceCount: 2}, Environment: "azureml:env:1",
		Settings: batch.Settings{MiniBatchSize: "10", OutputAction: batch.OutputAppendRow, OutputFileName: "p.csv", Retry: &job.ParallelRetry{MaxRetries: &three, Timeout: 30}}}
	other := &batch.Deployment{Workspace: "WS", Name: "keras", EndpointName: "other-ep", Type: batch.TypeModel, Model: "azureml:k:1"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutBatchEndpoint(ep); err != nil {
			return err
		}
		if err := tx.PutBatchEndpoint(&batch.Endpoint{Workspace: "WS", Name: "other-ep"}); err != nil {
			return err
		}
		if err := tx.PutBatchDeployment(dep); err != nil {
			return err
		}
		return tx.PutBatchDeployment(other)
	})
	if want := stcheck.Now(stcheck.Start); !ep.CreatedOn.Equal(want) || !dep.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, %v, want the transaction time %v", ep.CreatedOn, dep.CreatedOn, want)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		e, err := tx.GetBatchEndpoint("ws", "MNIST-BATCH")
		if err != nil {
			return err
		}
		if e.Workspace != "WS" || e.Name != "Mnist-Batch" || e.DefaultDeployment() != "torch" || e.Tags["a"] != "b" || e.CreatedBy != "alice" || !e.CreatedOn.Equal(ep.CreatedOn) {
			t.Errorf("GetBatchEndpoint = %+v", e)
		}
		d, err := tx.GetBatchDeployment("ws", "mnist-batch", "TORCH")
		if err != nil {
			return err
		}
		if d.Workspace != "WS" || d.Model != "azureml:m:1" || d.Resources.InstanceCount != 2 || d.Settings.OutputFileName != "p.csv" ||
			*d.Settings.Retry.MaxRetries != 3 || d.Environment != "azureml:env:1" || d.CodeConfiguration.ScoringScript != "s.py" {
			t.Errorf("GetBatchDeployment = %+v", d)
		}
		list, err := tx.ListBatchDeployments("WS", "Mnist-Batch")
		if err != nil {
			return err
		}
		if len(list) != 1 || list[0].Name != "torch" {
			t.Errorf("ListBatchDeployments = %+v, want torch only (keras is another endpoint's)", list)
		}
		eps, err := tx.ListBatchEndpoints("ws")
		if err != nil {
			return err
		}
		if len(eps) != 2 || eps[0].Name != "Mnist-Batch" || eps[1].Name != "other-ep" {
			t.Errorf("ListBatchEndpoints = %+v", eps)
		}
		return nil
	})
	// Replaced, spelled differently.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.PutBatchEndpoint(&batch.Endpoint{Workspace: "ws", Name: "MNIST-batch", Description: "new"})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		eps, err := tx.ListBatchEndpoints("ws")
		if err != nil {
			return err
		}
		if len(eps) != 2 || eps[0].Description != "new" || eps[0].DefaultDeployment() != "" {
			t.Errorf("after replacing: %+v", eps)
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteBatchEndpoint("ws", "mnist-batch") })
	err := s.View(t.Context(), func(tx store.Tx) error { _, err := tx.GetBatchDeployment("ws", "mnist-batch", "torch"); return err })
	stcheck.WantCode(t, "a deployment of a deleted endpoint", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteBatchEndpoint("ws", "mnist-batch") })
	stcheck.WantCode(t, "DeleteBatchEndpoint of an endpoint not there", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteBatchDeployment("ws", "other-ep", "torch") })
	stcheck.WantCode(t, "DeleteBatchDeployment of a deployment not there", err, core.ENOTFOUND)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteBatchDeployment("ws", "OTHER-EP", "Keras") })
	// A deleted workspace's endpoints and deployments go with it.
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "gone-b", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutBatchEndpoint(&batch.Endpoint{Workspace: "gone-b", Name: "ep1"}); err != nil {
			return err
		}
		return tx.PutBatchDeployment(&batch.Deployment{Workspace: "gone-b", EndpointName: "ep1", Name: "d1"})
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace("gone-b") })
	stcheck.View(t, s, func(tx store.Tx) error {
		eps, err := tx.ListBatchEndpoints("gone-b")
		if err != nil {
			return err
		}
		deps, err := tx.ListBatchDeployments("gone-b", "ep1")
		if err != nil {
			return err
		}
		if len(eps)+len(deps) != 0 {
			t.Errorf("a deleted workspace's endpoints %+v and deployments %+v remain", eps, deps)
		}
		return nil
	})
}

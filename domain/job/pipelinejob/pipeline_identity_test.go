package pipelinejob_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// A pipeline's identity is its steps' unless a step names its own; a
// step's services are its job's (Azure's 1b_e2e_registered_components
// asks for vs_code, jupyter_lab and tensor_board on its train step).
func TestPipelineIdentityAndServicesReachTheSteps(t *testing.T) {
	doc := jobtest.Set(threeSteps(), "identity", map[string]any{"type": "user_identity"})
	doc = jobtest.Set(doc, "jobs.train.identity", map[string]any{"type": "managed"})
	doc = jobtest.Set(doc, "jobs.train.services", map[string]any{
		"my_vscode": map[string]any{"type": "vs_code"}, "my_tensorboard": map[string]any{"type": "tensor_board", "log_dir": "outputs/tblogs"}})
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	run := pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": "sha256:" + strings.Repeat("b", 64)}}}
	prep, err := g.Resolve("prep", run)
	if err != nil {
		t.Fatal(err)
	}
	train, err := g.Resolve("train", run)
	if err != nil {
		t.Fatal(err)
	}
	if prep.Identity == nil || prep.Identity.Type != job.IdentityUserIdentity || len(prep.Services) != 0 {
		t.Errorf("prep: identity %+v services %v; want the pipeline's user_identity, no services", prep.Identity, prep.Services)
	}
	if train.Identity == nil || train.Identity.Type != job.IdentityManaged || train.Services["my_tensorboard"].LogDir != "outputs/tblogs" || train.Services["my_vscode"].Type != interactive.ServiceVSCode {
		t.Errorf("train: identity %+v services %v; want its own managed identity and services", train.Identity, train.Services)
	}
	_, err = decodePipeline(t, jobtest.Set(threeSteps(), "identity", map[string]any{"type": "kerberos"}))
	coretest.WantFieldError(t, err, "identity.type", "unknown identity type")
}

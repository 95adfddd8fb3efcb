package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// TestUserIdentityTokenSubmitsNoUserIdentityJob, written first: a job
// acting as its submitter (identity: user_identity) may submit jobs as
// its submitter may, but none that acts as the submitter in turn (a
// command, a pipeline or one of its steps, a sweep's trials): such a
// chain would go on acting as the user after the job that started it
// ended, beyond what the user submitted. The user may.
func TestUserIdentityTokenSubmitsNoUserIdentityJob(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 1)
	n, task := runWithIdentity(t, h, "ju", &job.JobIdentity{Type: "user_identity"})
	tok, err := h.svc.MintWorkloadToken(h.ctx, n, task.AttemptID, 0, &node.TokenRequest{Resource: "https://management.azure.com"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.svc.AuthenticateARMWorkload(h.ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	asJob := identity.WithPrincipal(h.ctx, p)
	for field, doc := range map[string]string{
		"identity":        `{"name":"chain-cmd","command":"true","compute":"cpu","identity":{"type":"user_identity"}}`,
		"identity ":       `{"name":"chain-rest","command":"true","compute":"cpu","identity":{"type":"UserIdentity"}}`,
		"jobs.a.identity": `{"type":"pipeline","name":"chain-step","compute":"cpu","jobs":{"a":{"type":"command","command":"true","identity":{"type":"user_identity"}}}}`,
		"identity  ":      `{"type":"pipeline","name":"chain-pipe","compute":"cpu","identity":{"type":"user_identity"},"jobs":{"a":{"type":"command","command":"true"}}}`,
		"identity   ": `{"type":"sweep","name":"chain-sweep","compute":"cpu","identity":{"type":"user_identity"},"trial":{"command":"echo ${{search_space.lr}}"},
			"search_space":{"lr":{"type":"choice","values":[1,2]}},"objective":{"goal":"maximize","primary_metric":"m"},"sampling_algorithm":"grid","limits":{"max_total_trials":2}}`,
	} {
		_, _, err := h.svc.SubmitJobDocument(asJob, ws, "", []byte(doc))
		if core.ErrorCode(err) != core.EFORBIDDEN || core.ErrorField(err) != strings.TrimSpace(field) {
			t.Errorf("a user_identity job submitting %s: %v, want EFORBIDDEN on %s", doc[:40], err, strings.TrimSpace(field))
		}
	}
	if _, _, err := h.svc.SubmitJob(asJob, ws, &job.JobSpec{Name: "chain-direct", Command: "true", Compute: "cpu", Identity: &job.JobIdentity{Type: "user_identity"}}); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("SubmitJob of a user_identity job by one: %v, want EFORBIDDEN", err)
	}
	// A plain job from the job: as its submitter may.
	if _, _, err := h.svc.SubmitJobDocument(asJob, ws, "", []byte(`{"name":"plain","command":"true","compute":"cpu"}`)); err != nil {
		t.Errorf("a user_identity job submitting a plain job: %v", err)
	}
	// The user: a user_identity job as before.
	bob := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser})
	if _, _, err := h.svc.SubmitJobDocument(bob, ws, "", []byte(`{"name":"bobs","command":"true","compute":"cpu","identity":{"type":"user_identity"}}`)); err != nil {
		t.Errorf("bob submitting a user_identity job: %v", err)
	}
}

package service_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/service/access"
)

// runWithIdentity submits a one-node job as bob with identity id on
// compute cpu and starts it; it returns the node and the task.
func runWithIdentity(t *testing.T, h *harness, name string, id *job.JobIdentity) (string, *node.AgentTask) {
	t.Helper()
	bob := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser})
	if _, _, err := h.svc.SubmitJob(bob, ws, &job.JobSpec{Name: name, Command: command(name), Compute: "cpu", Identity: id}); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	ids := h.joinAll()
	if len(ids) == 0 {
		ids = []string{h.order[len(h.order)-1]}
	}
	h.step(0)
	return ids[0], h.start(ids[0])
}

// identity: user_identity gives the job one identity, its submitter:
// a token from the rank's endpoint acts as bob, for this attempt only,
// never as an administrator and never on bob's account; a token that
// claims another user, or bob for a job that did not ask, is refused.
func TestUserIdentityJobActsAsItsSubmitter(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 1)
	n, task := runWithIdentity(t, h, "ju", &job.JobIdentity{Type: "user_identity"})
	want := access.UserIdentityClientID("user:bob")
	if len(task.Identities) != 1 || task.Identities[0].ClientID != want {
		t.Fatalf("a user_identity job's identities: %+v; want bob's alone (%s), not the compute's", task.Identities, want)
	}
	tok, err := h.svc.MintWorkloadToken(h.ctx, n, task.AttemptID, 0, &node.TokenRequest{Resource: "https://management.azure.com"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.svc.AuthenticateARMWorkload(h.ctx, tok.AccessToken)
	if err != nil {
		t.Fatalf("the user identity's token: %v", err)
	}
	if p.ID != "user:bob" || p.Kind != identity.PrincipalUser || p.Admin || p.AttemptID != task.AttemptID || p.ExpiresOn == nil {
		t.Fatalf("the user identity's principal: %+v; want bob, bound to the attempt, expiring", p)
	}
	if _, _, err := h.svc.CreateToken(identity.WithPrincipal(h.ctx, p), "bob", "keep", 0); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("a job acting as bob created an API token for bob: %v, want EFORBIDDEN", err)
	}

	forge := func(c workload.Claims) string {
		t.Helper()
		c.Audience = "shoal"
		s, _, err := h.svc.Workload().Mint(h.ctx, c, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, c := range map[string]workload.Claims{
		"another user":               {Subject: "job-user:user:alice", ClientID: access.UserIdentityClientID("user:alice"), AttemptID: task.AttemptID},
		"the administrator":          {Subject: "job-user:admin", ClientID: access.UserIdentityClientID("admin"), AttemptID: task.AttemptID},
		"bob with another client ID": {Subject: "job-user:user:bob", ClientID: "11111111-1111-1111-1111-111111111111", AttemptID: task.AttemptID},
		"bob without a client ID":    {Subject: "job-user:user:bob", AttemptID: task.AttemptID},
		"the compute's own identity": {Subject: "identity:" + ws + "/cpu", ClientID: want, AttemptID: task.AttemptID},
		"bob on an unknown attempt":  {Subject: "job-user:user:bob", ClientID: want, AttemptID: "att-nope"},
	} {
		if p, err := h.svc.AuthenticateWorkload(h.ctx, forge(c)); core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Errorf("%s: %+v %v, want EUNAUTHORIZED", name, p, err)
		}
	}
	// The attempt ends: its tokens are worthless.
	h.finish(n, task, node.RankCompleted)
	if p, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("after the attempt: %+v %v, want EUNAUTHORIZED", p, err)
	}
}

// A job without user_identity cannot be made to act as its submitter by
// a token naming bob, even one signed by the server.
func TestManagedJobTokenCannotBecomeItsSubmitter(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 1)
	_, task := runWithIdentity(t, h, "jm", &job.JobIdentity{Type: "managed"})
	if len(task.Identities) != 1 || task.Identities[0].Name == "user_identity" {
		t.Fatalf("a managed job's identities: %+v; want the compute's", task.Identities)
	}
	s, _, err := h.svc.Workload().Mint(h.ctx, workload.Claims{Subject: "job-user:user:bob", ClientID: access.UserIdentityClientID("user:bob"), AttemptID: task.AttemptID, Audience: "shoal"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, s); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("a managed job's token naming its submitter: %+v %v, want EUNAUTHORIZED", p, err)
	}
}

// identity: aml_token gives the rank no identity endpoint and the server
// mints it nothing, although its compute has an identity.
func TestAMLTokenJobGetsNoIdentity(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 1)
	n, task := runWithIdentity(t, h, "ja", &job.JobIdentity{Type: "aml_token"})
	if len(task.Identities) != 0 {
		t.Fatalf("an aml_token job's identities: %+v; want none", task.Identities)
	}
	if _, err := h.svc.MintWorkloadToken(h.ctx, n, task.AttemptID, 0, &node.TokenRequest{Resource: "shoal"}); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Fatalf("a token for an aml_token job: %v, want EFORBIDDEN", err)
	}
}

// identity: managed naming an identity its compute lacks, or on a compute
// without any, is refused at submission naming the field.
func TestManagedIdentityTheComputeLacksIsRefused(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 1)
	h.compute("plain", 0, 1, 120)
	for name, spec := range map[string]*job.JobSpec{
		"another client": {Name: "j1", Command: command("j1"), Compute: "cpu", Identity: &job.JobIdentity{Type: "managed", ClientID: "11111111-1111-1111-1111-111111111111"}},
		"no identity":    {Name: "j2", Command: command("j2"), Compute: "plain", Identity: &job.JobIdentity{Type: "managed"}},
	} {
		_, _, err := h.svc.SubmitJob(h.ctx, ws, spec)
		if fe, ok := err.(*core.Error); !ok || fe.Field != "identity" {
			t.Errorf("%s: %v, want a refusal naming identity", name, err)
		}
	}
	if _, _, err := h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Name: "j3", Command: command("j3"), Compute: "plain", Identity: &job.JobIdentity{Type: "user_identity"}}); err != nil {
		t.Errorf("user_identity on a compute without identities: %v", err)
	}
}

package service_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/workload"
)

// These tests check that a workload token proves only what its record
// says: the server derives the submitter and the identity from the job
// attempt (or instance node) the token is bound to, never from the
// token's own claims, even when they carry the server's signature.

func TestWorkloadTokenClaimsAreCheckedAgainstTheRecord(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	admin := h.adminCtx()
	other, err := h.svc.CreateIdentity(admin, "other")
	if err != nil {
		t.Fatal(err)
	}
	h.identityCompute("cpu", 1)
	bob := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser})
	if _, _, err := h.svc.SubmitJob(bob, ws, &job.JobSpec{Name: "jb", Command: command("jb"), Compute: "cpu",
		Resources: &job.JobResources{InstanceCount: 1}}); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	ids := h.joinAll()
	h.step(0)
	task := h.start(ids[0])

	tok, err := h.svc.MintWorkloadToken(h.ctx, ids[0], task.AttemptID, 0, &node.TokenRequest{Resource: "shoal"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken)
	if err != nil {
		t.Fatalf("a genuine token: %v", err)
	}
	if p.OnBehalfOf != "user:bob" || p.AttemptID != task.AttemptID || p.Kind != identity.PrincipalIdentity {
		t.Fatalf("a genuine token's principal: %+v", p)
	}
	real := p.ID

	// Tokens signed with the server's own key whose claims were chosen by
	// someone else (a stolen key, a bug in minting, a replica on older code).
	forge := func(c workload.Claims) string {
		t.Helper()
		c.Audience = "shoal"
		s, _, err := h.svc.Workload().Mint(h.ctx, c, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Naming the administrator as the submitter changes nothing: the job's
	// record says bob submitted it.
	p, err = h.svc.AuthenticateWorkload(h.ctx, forge(workload.Claims{Subject: real, ClientID: tok.ClientID, AttemptID: task.AttemptID, Submitter: "admin"}))
	if err != nil {
		t.Fatalf("a token claiming another submitter: %v", err)
	}
	if p.OnBehalfOf != "user:bob" || p.ID != real {
		t.Fatalf("a token claiming the admin submitted the job acts as %+v; want on behalf of user:bob", p)
	}
	// Another identity, not the compute's: refused, whether named by its
	// subject, its client ID or both.
	for name, c := range map[string]workload.Claims{
		"another identity":                  {Subject: "identity:" + other.Name, ClientID: other.ClientID, AttemptID: task.AttemptID},
		"another subject, the real client":  {Subject: "identity:" + other.Name, ClientID: tok.ClientID, AttemptID: task.AttemptID},
		"the real subject, another client":  {Subject: real, ClientID: other.ClientID, AttemptID: task.AttemptID},
		"no client ID":                      {Subject: real, AttemptID: task.AttemptID},
		"the admin as subject":              {Subject: "admin", ClientID: tok.ClientID, AttemptID: task.AttemptID},
		"an instance binding of a job node": {Subject: real, ClientID: tok.ClientID, AttemptID: "instance-node:" + ids[0]},
	} {
		if p, err := h.svc.AuthenticateWorkload(h.ctx, forge(c)); core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Errorf("%s: %+v %v, want EUNAUTHORIZED", name, p, err)
		}
	}

	// The compute loses its identity: the token it got before is refused.
	minN, maxN, idle := 0, 1, 120
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, &compute.ComputeSpec{
		Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle,
		Identity: &compute.IdentitySpec{Type: compute.IdentityNone},
	}, ""); err != nil {
		t.Fatal(err)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("a token of an identity the compute no longer has: %+v %v, want EUNAUTHORIZED", p, err)
	}
}

// An instance's node keeps its ID across a stop and a start, but a token
// minted in one run is refused in the next.
func TestInstanceTokenDiesWithTheRun(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	admin := h.adminCtx()
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance,
		Size: "Standard_DS3_v2", Identity: &compute.IdentitySpec{Type: compute.IdentitySystemAssigned}}, ""); err != nil {
		t.Fatal(err)
	}
	run := func() (string, *node.TokenResponse) {
		t.Helper()
		var ids []string
		for i := 0; i < 5 && len(ids) == 0; i++ {
			h.step(time.Second)
			ids = h.joinAll()
		}
		if len(ids) != 1 {
			t.Fatalf("instance nodes joined: %v", ids)
		}
		h.step(time.Second)
		tok, err := h.svc.MintInstanceToken(h.ctx, ids[0], &node.TokenRequest{Resource: "shoal"})
		if err != nil {
			t.Fatal(err)
		}
		if p, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken); err != nil || p.OnBehalfOf != "admin" {
			t.Fatalf("the instance's token in its run: %+v %v", p, err)
		}
		return ids[0], tok
	}
	node1, old := run()
	if _, err := h.svc.StopInstance(admin, ws, "ci1"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5 && h.findCompute("ci1").Instance.State != compute.InstanceStopped; i++ {
		h.step(time.Second)
	}
	h.agent(node1).exited = true
	if _, err := h.svc.StartInstance(admin, ws, "ci1"); err != nil {
		t.Fatal(err)
	}
	node2, _ := run()
	if node2 != node1 {
		t.Fatalf("the instance's node is %s after the start, %s before: the test needs the same ID", node2, node1)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, old.AccessToken); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("a token from before the stop, after the start: %+v %v, want EUNAUTHORIZED", p, err)
	}
}

// A service principal's token minted before its secret is reset is
// refused, even within the same second (a token's iat has whole seconds).
func TestServicePrincipalTokenDiesWithItsSecretWithinTheSecond(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	admin := h.adminCtx()
	sp, secret, err := h.svc.CreateServicePrincipal(admin, "ci-bot", "")
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(100 * time.Millisecond)
	old, _, err := h.svc.ClientCredentialsToken(h.ctx, sp.ClientID, secret, "shoal/.default")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, old.AccessToken); err != nil || p.ID != "sp:ci-bot" {
		t.Fatalf("the token before the reset: %+v %v", p, err)
	}
	h.clock.Advance(100 * time.Millisecond)
	_, secret, err = h.svc.ResetServicePrincipalSecret(admin, "ci-bot")
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(100 * time.Millisecond)
	if p, err := h.svc.AuthenticateWorkload(h.ctx, old.AccessToken); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("a token minted 100 ms before the reset, within the same second: %+v %v, want EUNAUTHORIZED", p, err)
	}
	fresh, _, err := h.svc.ClientCredentialsToken(h.ctx, sp.ClientID, secret, "shoal/.default")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, fresh.AccessToken); err != nil || p.ID != "sp:ci-bot" {
		t.Fatalf("the token after the reset, within the same second: %+v %v", p, err)
	}
}

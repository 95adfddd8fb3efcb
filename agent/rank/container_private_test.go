package rank

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// An image from a registry that requires a login, pulled into the store
// a host's nodes share for a job that had the login, is not handed to a
// job without it: the node asks the registry again with the job's own
// (absent) login, and the registry refuses. The store is shared by the
// nodes of every workspace's clusters on the host; a local copy alone
// would let another workspace run a private image it may not pull.
func TestContainerRankPrivateImageNeedsItsLogin(t *testing.T) {
	env := testctr.Shared(t)
	image := env.AuthRegistry.Addr + "/" + testctr.PushedBase
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-private")
	with := task("att-ctr-private-1", image)
	with.Command = "echo pulled-with-login"
	with.Container.Registries = []compute.RegistryCredential{{Registry: env.AuthRegistry.Addr,
		Username: env.AuthRegistry.User, Password: env.AuthRegistry.Password, Insecure: true}}
	log := runRank(t, a, with, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || !strings.Contains(log, "pulled-with-login") {
		t.Fatalf("with the login: final report %+v; log:\n%s", rep, log)
	}

	srv2 := newFakeAgentServer(t)
	b := containerAgent(t, env, srv2, "ctr-private-other")
	without := task("att-ctr-private-2", image)
	without.Command = "echo ran-without-login"
	log = runRank(t, b, without, nil)
	rep := srv2.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankImageFailed || !strings.Contains(strings.ToLower(rep.Reason), "unauthorized") {
		t.Errorf("without the login: final report %+v, want Failed/image_failed, unauthorized; log:\n%s", rep, log)
	}
	if strings.Contains(log, "ran-without-login") {
		t.Errorf("a job without the login ran the private image:\n%s", log)
	}
}

package rank

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
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

// A build whose Dockerfile starts FROM a private image is no way around
// its login: the host's nodes share one store, where another workspace's
// job left the image it pulled with its login. The base image is pulled
// through the job's own logins before the build: without one the job
// fails unauthorized and nothing of the private image runs.
func TestContainerRankBuildOnAPrivateBaseNeedsItsLogin(t *testing.T) {
	env := testctr.Shared(t)
	image := env.AuthRegistry.Addr + "/" + testctr.PushedBase
	login := []compute.RegistryCredential{{Registry: env.AuthRegistry.Addr,
		Username: env.AuthRegistry.User, Password: env.AuthRegistry.Password, Insecure: true}}
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-private-base")
	with := task("att-ctr-private-base-1", image)
	with.Command = "echo pulled-with-login"
	with.Container.Registries = login
	if log := runRank(t, a, with, nil); srv.final(t).State != node.RankCompleted {
		t.Fatalf("with the login:\n%s", log)
	}

	srv2 := newFakeAgentServer(t)
	b := containerAgent(t, env, srv2, "ctr-private-base-other")
	marker := fmt.Sprintf("built-on-private-%d", time.Now().UnixNano())
	srv2.artifacts["ctx-private-base"] = tarGzFiles(t, map[string]string{
		"Dockerfile": "ARG BASE=" + image + "\nFROM ${BASE}\nRUN echo " + marker + " > /m.txt\n",
	})
	without := task("att-ctr-private-base-2", "")
	without.Environment = &asset.EnvironmentSpec{Build: &asset.EnvironmentBuild{Path: "ctx-private-base"}, Source: "inline"}
	without.Command = "cat /m.txt"
	log := runRank(t, b, without, nil)
	rep := srv2.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankImageFailed || !strings.Contains(strings.ToLower(rep.Reason), "unauthorized") {
		t.Errorf("a build on the private image without its login: final report %+v, want Failed/image_failed, unauthorized; log:\n%s", rep, log)
	}
	if strings.Contains(log, marker) {
		t.Errorf("a build without the login ran on the private image:\n%s", log)
	}

	srv3 := newFakeAgentServer(t)
	c := containerAgent(t, env, srv3, "ctr-private-base-login")
	srv3.artifacts["ctx-private-base"] = srv2.artifacts["ctx-private-base"]
	withBuild := task("att-ctr-private-base-3", "")
	withBuild.Environment = without.Environment
	withBuild.Container.Registries = login
	withBuild.Command = "cat /m.txt"
	if log := runRank(t, c, withBuild, nil); srv3.final(t).State != node.RankCompleted || !strings.Contains(log, marker) {
		t.Errorf("a build on the private image with its login:\n%s", log)
	}
}

package rank

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/teststorage"
)

// A registered version (a data asset the server resolved: the source's
// Asset) is fetched once per node and workspace and then served without
// listing the source again: a rank of the same version reads the first
// bytes even after the blob changed. The source still decides, with each
// job's own credential, whether the job may read there: a wrong key or
// an emptied place fails the rank although the node holds the bytes.
// Another workspace's version of the same name, and a path that is no
// registered version, are fetched on their own.
func TestRankRegisteredVersionServedByVersion(t *testing.T) {
	az, admin := azuriteWith(t, map[string]string{"sets/v.txt": "first\n"})
	srv := newOutputsServer(t)
	a := dataAgent(t, srv, "byversion", runas.Unisolated(), t.TempDir())
	versioned := func(key string) *node.DataSource {
		s := azuriteSource(az, "sets/v.txt", key)
		s.Asset = "iris:1"
		return s
	}
	read := func(id string, src *node.DataSource, workspace string) node.RankReport {
		t.Helper()
		tk := dataTask(id, `cat ${{inputs.data}} > "$AZUREML_OUTPUT_out/v"`, jobio.TypeURIFile, "download", src)
		tk.Workspace = workspace
		srv.mu.Lock()
		srv.reps = nil
		srv.mu.Unlock()
		log := runRank(t, a, tk, nil)
		rep := srv.final(t)
		if rep.State == node.RankCompleted {
			return rep
		}
		t.Logf("rank %s: %+v; log:\n%s", id, rep, log)
		return rep
	}
	if rep := read("v1", versioned(az.Key), "ws"); rep.State != node.RankCompleted || srv.kept("out/v") != "first\n" {
		t.Fatalf("first rank: %+v read %q", rep, srv.kept("out/v"))
	}
	put := func(body string) {
		if _, err := admin.NewBlockBlobClient("sets/v.txt").UploadBuffer(context.Background(), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	put("changed bytes\n")
	if rep := read("v2", versioned(az.Key), "ws"); rep.State != node.RankCompleted || srv.kept("out/v") != "first\n" {
		t.Errorf("the same version again: %+v read %q, want the node's first bytes", rep, srv.kept("out/v"))
	}
	// Not a registered version: the listing tells the content.
	if rep := read("plain", azuriteSource(az, "sets/v.txt", az.Key), "ws"); rep.State != node.RankCompleted || srv.kept("out/v") != "changed bytes\n" {
		t.Errorf("a datastore path: %+v read %q, want the new bytes", rep, srv.kept("out/v"))
	}
	// Another workspace's iris:1 at the same place is its own entry.
	if rep := read("other-ws", versioned(az.Key), "ws2"); rep.State != node.RankCompleted || srv.kept("out/v") != "changed bytes\n" {
		t.Errorf("another workspace: %+v read %q, want its own fetch", rep, srv.kept("out/v"))
	}
	// The node holds the bytes, but a job with a wrong key may not read.
	wrongKey := "d3Jvbmcga2V5IGZvciB0aGUgZGV2IGFjY291bnQ="
	if rep := read("wrong-key", versioned(wrongKey), "ws"); rep.State != node.RankFailed || rep.Failure != node.RankInputFailed {
		t.Errorf("a wrong key on a held version: %+v, want input_failed", rep)
	}
	// Nor when the place holds nothing any more.
	if _, err := admin.NewBlobClient("sets/v.txt").Delete(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if rep := read("gone", versioned(az.Key), "ws"); rep.State != node.RankFailed || rep.Failure != node.RankInputFailed {
		t.Errorf("a held version whose place is empty: %+v, want input_failed", rep)
	}
}

// A rank in a container fetches its inputs through its account's
// network namespace, as a host-process rank does, never from the
// agent's network: with no way out of that namespace (no slirp4netns)
// the fetch fails the job, and with one it reads the input.
func TestContainerRankFetchesThroughItsAccountsNetwork(t *testing.T) {
	env := testctr.Shared(t)
	slirp := testenv.Command(t, "slirp4netns", "slirp4netns (the namespace's way out)", "apt-get install slirp4netns")
	h := teststorage.StartHTTP(t, map[string][]byte{"/d/iris.csv": []byte("iris through the namespace\n")})
	for name, way := range map[string]string{"slirp": slirp, "no way out": ""} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeAgentServer(t)
			id := "ctr-ns-" + strings.ReplaceAll(name, " ", "-")
			a := containerAgent(t, env, srv, id)
			c, err := datacache.Open(t.TempDir(), 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			a.Data = c
			a.Networks = NewNetworks(way, srv.URL)
			tk := task("att-"+id, env.Registry.Addr+"/"+testctr.PushedBase)
			tk.Inputs = map[string]*job.JobInput{"data": {Type: jobio.TypeURIFile, Path: h.URL + "/d/iris.csv", Mode: jobio.ModeDownload}}
			tk.InputSources = map[string]*node.DataSource{"data": {Kind: node.DataHTTP, URI: h.URL + "/d/iris.csv", ServiceURL: h.URL + "/d/iris.csv", AllowHTTP: true}}
			tk.Command = `cat ${{inputs.data}}`
			log := runRank(t, a, tk, nil)
			rep := srv.final(t)
			if way != "" {
				if rep.State != node.RankCompleted || !strings.Contains(log, "iris through the namespace") {
					t.Fatalf("final report %+v; log:\n%s", rep, log)
				}
			} else if rep.State != node.RankFailed || rep.Failure != node.RankInputFailed || !strings.Contains(rep.Reason, "no slirp4netns") {
				t.Fatalf("final report %+v, want input_failed: the namespace has no way out; log:\n%s", rep, log)
			}
			noContainersLeft(t, env, id)
		})
	}
}

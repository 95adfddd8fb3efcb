package rank

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
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

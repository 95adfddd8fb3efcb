package api_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/store"
)

// GET .../outputs?output=NAME serves one output's folder of a rank's
// archive (the artifacts once kept); an output the job lacks is a 404
// naming the field, and asking for it serves nothing of the archive.
func TestJobOutputByName(t *testing.T) {
	e := newTestEnv(t)
	runJob(t, e, "x")
	dir := t.TempDir()
	for rel, content := range map[string]string{"artifacts/outputs/helloworld.txt": "hello", "model/m.txt": "weights"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	var b bytes.Buffer
	if _, err := archive.Pack(&b, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.files.PutOutputs("default", "x", 1, 0, &b, 1<<20); err != nil {
		t.Fatal(err)
	}
	const path = "/api/v1/workspaces/default/jobs/x/outputs?rank=0&output=artifacts"
	if r := send(t, e, e.admin, "GET", path, "", nil); r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"target":"output"`) || !strings.Contains(string(r.body), "its outputs: none") {
		t.Fatalf("artifacts before they are kept: %d %s", r.status, r.body)
	}
	if err := e.store.Update(context.Background(), func(tx store.Tx) error {
		j, err := tx.GetJob("default", "x")
		if err != nil {
			return err
		}
		job.KeepArtifacts(j)
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
		t.Fatal(err)
	}
	r := send(t, e, e.admin, "GET", path, "", nil)
	if r.status != http.StatusOK || r.header.Get("X-Shoal-Attempt") != "1" {
		t.Fatalf("artifacts: %d %s", r.status, r.body)
	}
	got := t.TempDir()
	if err := archive.Unpack(bytes.NewReader(r.body), got, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(got, "outputs", "helloworld.txt")); string(b) != "hello" {
		t.Errorf("outputs/helloworld.txt of the artifacts: %q", b)
	}
	if _, err := os.Stat(filepath.Join(got, "model")); err == nil {
		t.Error("the artifacts' archive holds another output")
	}
}

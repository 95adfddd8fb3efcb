package files

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// A job that declares an output folder and writes nothing in it still
// has its outputs uploaded: an archive with the empty folder, which the
// next step of a pipeline gets as an empty folder. (The agent uploaded
// nothing when no file was there, and the pipeline waited for good on
// outputs that never came.) A job with no outputs folder at all uploads
// nothing.
func TestDeliverUploadsADeclaredEmptyOutputFolder(t *testing.T) {
	var mu sync.Mutex
	uploads := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/outputs") {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			uploads[r.URL.Path] = b
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := client.NewAgentClient(srv.URL, "tok")
	dir := t.TempDir()
	o, errs := OpenOutbox(filepath.Join(dir, "outbox"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	declared := filepath.Join(dir, "declared")
	if err := os.MkdirAll(filepath.Join(declared, "o"), 0o755); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none")
	if err := os.MkdirAll(none, 0o755); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, r := range []*Result{
		{Ref: node.RankRef{AttemptID: "att-declared"}, JobName: "p-a", OutputsDir: declared, Report: node.RankReport{State: node.RankCompleted}},
		{Ref: node.RankRef{AttemptID: "att-none"}, JobName: "j", OutputsDir: none, Report: node.RankReport{State: node.RankCompleted}},
	} {
		if _, err := o.Deliver(context.Background(), c, r, false, false, log); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	for path, b := range uploads {
		if strings.Contains(path, "att-none") {
			t.Errorf("a job with no outputs folder uploaded %s", path)
		}
		if strings.Contains(path, "att-declared") {
			got = b
		}
	}
	if got == nil {
		t.Fatalf("the declared empty folder was not uploaded (uploads %v)", len(uploads))
	}
	found, err := archive.Subtree(io.Discard, strings.NewReader(string(got)), "o")
	if err != nil || !found {
		t.Fatalf("the upload does not hold folder o (found %v, %v)", found, err)
	}
}

// A job whose outputs the server refuses to keep (the workspace's storage
// quota is spent) does not end Completed: the next step of a pipeline
// would read an empty folder as if the job had written nothing. It ends
// Failed with the server's words.
func TestDeliverRefusedOutputsFailTheRank(t *testing.T) {
	var mu sync.Mutex
	var reports []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/outputs") {
			_, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":{"code":"quota_exceeded","message":"workspace ws: storage quota of 1 MiB is spent"}}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reports = append(reports, string(b))
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := client.NewAgentClient(srv.URL, "tok")
	dir := t.TempDir()
	o, errs := OpenOutbox(filepath.Join(dir, "outbox"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "o"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "o", "model.bin"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := 0
	r := &Result{Ref: node.RankRef{AttemptID: "att-1"}, JobName: "p-a", OutputsDir: out,
		Report: node.RankReport{State: node.RankCompleted, ExitCode: &zero}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := o.Deliver(context.Background(), c, r, false, false, log); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) == 0 {
		t.Fatal("no report reached the server")
	}
	last := reports[len(reports)-1]
	if !strings.Contains(last, `"state":"Failed"`) || !strings.Contains(last, "storage quota of 1 MiB is spent") {
		t.Fatalf("final report %s; want Failed with the server's words", last)
	}
}

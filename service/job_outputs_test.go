package service_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// packed is an outputs archive of files (relative path → content), as a
// rank's agent uploads it.
func packed(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := archive.Pack(&b, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// unpacked unpacks an archive and reads one file of it.
func unpacked(t *testing.T, r io.ReadCloser, rel string) string {
	t.Helper()
	defer r.Close()
	dir := t.TempDir()
	if err := archive.Unpack(r, dir, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	return string(b)
}

// A rank's final report that says it kept its ./outputs and ./logs lists
// artifacts among the job's outputs (where Azure ML shows them); each
// output downloads alone; a name the job lacks is refused naming the
// field and the outputs it has; and the next attempt's rank is not handed
// the artifacts as a folder to write.
func TestKeptArtifactsAreAnOutput(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 600)
	h.submitSpec(&job.JobSpec{Name: "j", Command: "python train.py", Compute: "cpu", Outputs: map[string]*job.JobOutput{"model": {}}})
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	task := h.start(n)
	if err := h.files.PutOutputs(ws, "j", task.Attempt, 0, bytes.NewReader(packed(t, map[string]string{
		"model/m.txt": "weights", "artifacts/outputs/helloworld.txt": "hello", "artifacts/logs/y.txt": "y",
	})), 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.job("j").Outputs[job.ArtifactsOutput]; ok {
		t.Fatal("artifacts listed before the rank said it kept them")
	}
	code := 143
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, 0, &node.RankReport{State: node.RankPreempted, ExitCode: &code, Artifacts: true}); err != nil {
		t.Fatal(err)
	}
	o := h.job("j").Outputs[job.ArtifactsOutput]
	if o == nil || o.Path != "azureml://datastores/workspaceartifactstore/paths/ExperimentRun/dcid.j/" || o.Type != job.InputTypeURIFolder {
		t.Fatalf("the job's artifacts output: %+v", o)
	}
	for output, want := range map[string]struct{ rel, content string }{
		"artifacts": {"outputs/helloworld.txt", "hello"}, "model": {"m.txt", "weights"},
	} {
		f, err := h.svc.OpenJobOutputs(h.ctx, ws, "j", 0, output)
		if err != nil {
			t.Fatalf("output %s: %v", output, err)
		}
		if got := unpacked(t, f, want.rel); got != want.content || f.Job != "j" || f.Attempt != 1 {
			t.Errorf("output %s: %s = %q (job %s attempt %d), want %q", output, want.rel, got, f.Job, f.Attempt, want.content)
		}
	}
	_, err := h.svc.OpenJobOutputs(h.ctx, ws, "j", 0, "nope")
	var se *core.Error
	if !errors.As(err, &se) || se.Code != core.ENOTFOUND || se.Field != "output" || !bytes.Contains([]byte(se.Message), []byte("artifacts, model")) {
		t.Errorf("an output the job lacks: %v, want not found naming the field and its outputs", err)
	}

	// Preempted: the job runs again, its artifacts kept listed, and its
	// new rank is handed only the outputs it declared.
	h.step(0)
	h.joinAll()
	h.step(0)
	var tasks []*node.AgentTask
	for _, id := range h.nodeIDs("cpu") {
		tasks = append(tasks, h.syncStart(id)...)
	}
	if len(tasks) != 1 {
		t.Fatalf("the requeued job's node got %s", describeTasks(tasks))
	}
	if got := tasks[0].Outputs; !slices.Equal(got, []string{"model"}) {
		t.Errorf("the next attempt's rank is handed outputs %q, want [model]", got)
	}
}

package clidoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIReferenceIsCurrent fails when the checked-in CLI reference is not
// what the commands generate: run `go run ./cmd/shoal-docs` and commit.
func TestCLIReferenceIsCurrent(t *testing.T) {
	diffs, err := Diff(filepath.Join("..", "..", Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("docs/reference/cli is out of date (run `go run ./cmd/shoal-docs` and commit):\n  %s", strings.Join(diffs, "\n  "))
	}
}

// The comparison notices a changed, a missing and an extra page.
func TestCLIReferenceDiffNotices(t *testing.T) {
	dir := t.TempDir()
	if err := GenerateMarkdown(dir); err != nil {
		t.Fatal(err)
	}
	if d, err := Diff(dir); err != nil || len(d) != 0 {
		t.Fatalf("a fresh copy differs: %v %v", d, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shoal_compute_list.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "shoal_job_show.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shoal_gone.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Diff(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(d, "\n")
	for _, want := range []string{"shoal_compute_list.md: differs", "shoal_job_show.md: missing", "shoal_gone.md: no such command"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff %q lacks %q", got, want)
		}
	}
}

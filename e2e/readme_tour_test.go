package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// tourHeading is the README section whose shell blocks TestReadmeTour runs.
const tourHeading = "## A short tour"

// tourBlocks returns the sh code blocks of the README's tour, in order,
// each with the line it starts on.
func tourBlocks(t *testing.T, readme string) (blocks []string, lines []int) {
	t.Helper()
	in, fence := false, false
	var cur strings.Builder
	for i, l := range strings.Split(readme, "\n") {
		switch {
		case !fence && strings.HasPrefix(l, "## "):
			in = l == tourHeading
		case in && !fence && strings.HasPrefix(l, "```sh"):
			fence = true
			cur.Reset()
			lines = append(lines, i+2)
		case in && fence && strings.HasPrefix(l, "```"):
			fence = false
			blocks = append(blocks, cur.String())
		case in && fence:
			cur.WriteString(l + "\n")
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("README.md: %d sh blocks under %q; the tour (or this test's reading of it) is broken", len(blocks), tourHeading)
	}
	return blocks, lines
}

// TestReadmeTour runs the README's tour as written, block after block in
// one folder, with `shoal` on the PATH and the client config the server
// wrote: what a newcomer types must work.
func TestReadmeTour(t *testing.T) {
	t.Parallel()
	// The tour's job runs python3 and its instance takes an OpenSSH key.
	testenv.Python3(t)
	testenv.OpenSSH(t, "ssh-keygen")
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, lines := tourBlocks(t, string(readme))

	s := startServer(t, serverOpts{Config: fastJobsConfig})
	work := t.TempDir()
	// The tour's first block puts shoal on the PATH, in ~/.local/bin: the
	// blocks run with that folder on the PATH and not this suite's binary,
	// so a tour that used shoal before saying how to install it fails.
	if !strings.Contains(blocks[0], "go build -o ~/.local/bin/ ./cmd/shoal ./cmd/shoal-server") || !strings.Contains(blocks[0], "shoal version") {
		t.Fatalf("README.md:%d: the tour does not start by putting shoal on the PATH (go build -o ~/.local/bin/ ./cmd/shoal ./cmd/shoal-server, then shoal version):\n%s", lines[0], blocks[0])
	}
	bin := filepath.Join(s.home, ".local", "bin")
	env := append(append([]string{}, s.env...), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for i, block := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", block)
		cmd.Dir, cmd.Env = work, env
		if i == 0 {
			// The install runs in the repository's folder, with the Go
			// caches of this process (the tour's HOME has none); without
			// Go (a prebuilt suite) the binary is put where the build
			// would put it and the rest of the block runs.
			cmd.Dir, cmd.Env = root, append(goEnv(t), s.env...)
			if _, err := exec.LookPath("go"); err != nil {
				if err := os.MkdirAll(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := copyFile(shoalBin, filepath.Join(bin, "shoal")); err != nil {
					t.Fatal(err)
				}
				cmd.Args[len(cmd.Args)-1] = strings.ReplaceAll(block, "go build -o ~/.local/bin/ ./cmd/shoal ./cmd/shoal-server", ": no Go here, the suite's binary was copied")
			}
		}
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("README.md:%d: the tour's block %d failed: %v\n%s", lines[i], i+1, err, out)
		}
		t.Logf("README.md:%d: block %d:\n%s", lines[i], i+1, out)
	}
	// What the tour says happened did: the job's output came back, and
	// the computes it deleted are gone.
	if b, err := os.ReadFile(filepath.Join(work, "out", "tour-job-1", "model", "model.txt")); err != nil || string(b) != "weights\n" {
		t.Errorf("the tour's download: %q, %v", b, err)
	}
	if out, _, code := run(t, s.env, "compute", "list", "--query", "[].name", "-o", "tsv"); code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("after the tour, computes left: %q (exit %d)", out, code)
	}
}

// goEnv is the Go toolchain's cache and module settings of this process,
// for a build under another HOME: it reuses the caches, offline.
func goEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN").Output()
	if err != nil {
		return nil // no Go: the caller copies the binary instead
	}
	v := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"}
	var env []string
	for i, name := range names {
		if i < len(v) {
			env = append(env, name+"="+v[i])
		}
	}
	return env
}

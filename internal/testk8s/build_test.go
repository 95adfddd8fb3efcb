package testk8s

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent callers (test packages, here goroutines with a lock file of
// their own each, as processes have) build once: the others wait on the
// lock and find the result.
func TestBuildOnceBuildsOnceForConcurrentCallers(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "v-x")
	var builds atomic.Int32
	build := func(partial string) error {
		builds.Add(1)
		time.Sleep(200 * time.Millisecond) // long enough for the others to queue
		return os.WriteFile(filepath.Join(partial, "pause"), []byte("bin"), 0o755)
	}
	var wg sync.WaitGroup
	took := make([]time.Duration, 4)
	errs := make([]error, 4)
	for i := range took {
		wg.Add(1)
		go func() { defer wg.Done(); took[i], errs[i] = buildOnce(root, out, build) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("built %d times, want once", n)
	}
	built := 0
	for _, d := range took {
		if d > 0 {
			built++
		}
	}
	if built != 1 {
		t.Errorf("build times %v: want exactly one non-zero", took)
	}
	if b, err := os.ReadFile(filepath.Join(out, "pause")); err != nil || string(b) != "bin" {
		t.Errorf("result: %q, %v", b, err)
	}
}

// A failed build leaves nothing that a later call would take for built.
func TestBuildOnceRetriesAfterAFailedBuild(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "v-x")
	if _, err := buildOnce(root, out, func(string) error { return errors.New("proxy unreachable") }); err == nil || !strings.Contains(err.Error(), "proxy unreachable") {
		t.Fatalf("err %v, want the build's", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a failed build left its output in place")
	}
	took, err := buildOnce(root, out, func(partial string) error { return os.WriteFile(filepath.Join(partial, "pause"), nil, 0o755) })
	if err != nil || took == 0 {
		t.Fatalf("second build: %v, %v", took, err)
	}
}

func TestLdflagsStampTheVersionForBothPackages(t *testing.T) {
	f := ldflags()
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=" + Version, "-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=34", "-X k8s.io/client-go/pkg/version.gitVersion=" + Version,
		"-X k8s.io/client-go/pkg/version.gitMinor=34",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("ldflags %q lack %q", f, want)
		}
	}
}

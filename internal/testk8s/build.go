package testk8s

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Version is the Kubernetes release the harness builds and runs: the last
// one that runs on cgroup v1 without further settings, the hierarchy the
// test machines have.
const Version = "v1.34.2"

// CacheDirVar names the directory the built binaries are cached in, one
// subdirectory per version and recipe; by default a directory under the
// system's temp dir shared by every test package (and run) on the machine.
const CacheDirVar = "SHOAL_TESTK8S_CACHE"

// commands are the binaries Binaries builds: the Kubernetes ones by
// package path in the build module, etcd and the pause program from
// directories of the build module.
var commands = []string{
	"k8s.io/kubernetes/cmd/kube-apiserver",
	"k8s.io/kubernetes/cmd/kube-controller-manager",
	"k8s.io/kubernetes/cmd/kube-scheduler",
	"k8s.io/kubernetes/cmd/kubelet",
	"./etcd",
}

// recipeFiles are the build module's files; their contents key the cache,
// so that a change to any of them builds afresh.
var recipeFiles = []string{"go.mod", "go.sum", "tools.go", "etcd/main.go", "pause/main.go"}

// ldflags strips the binaries and stamps the version: without it the
// server reports v0.0.0, which kubectl and client-go refuse to parse.
func ldflags() string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(Version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	f := "-s -w"
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		f += fmt.Sprintf(" -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
			p, Version, p, major, p, minor, p)
	}
	return f
}

// Bin is a directory of built binaries: kube-apiserver,
// kube-controller-manager, kube-scheduler, kubelet, etcd and pause.
type Bin string

// Path is the named binary's path.
func (b Bin) Path(name string) string { return filepath.Join(string(b), name) }

// buildDir is the build module's directory, found from this source file:
// tests run from source, so it is there (a binary built with -trimpath
// could not find it, and says so).
func buildDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("cannot locate internal/testk8s's source (built with -trimpath?)")
	}
	dir := filepath.Join(filepath.Dir(file), "build")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("the build module: %w", err)
	}
	return dir, nil
}

// cacheRoot is the cache directory, created if missing. Readable by
// all on purpose: it holds only public Kubernetes binaries built from the
// module proxy's sources, shared by every test process on the machine.
func cacheRoot() (string, error) {
	dir := os.Getenv(CacheDirVar)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "shoal-testk8s-cache")
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// Binaries returns the directory of the built binaries, building them
// when the cache has none for this version and recipe, and how long the
// build took (0 when cached). The build runs once per machine: concurrent
// test packages wait on a file lock in the cache directory, then find the
// binaries built. A cold build takes minutes (about 3.5 on 2 cores) and
// needs the Go module proxy; a cached one, none of that.
func Binaries() (Bin, time.Duration, error) {
	src, err := buildDir()
	if err != nil {
		return "", 0, err
	}
	root, err := cacheRoot()
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", Version, ldflags(), runtime.Version())
	for _, f := range recipeFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", 0, fmt.Errorf("the build module: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	out := filepath.Join(root, Version+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	took, err := buildOnce(root, out, func(partial string) error {
		args := append([]string{"build", "-trimpath", "-ldflags", ldflags(), "-o", partial + "/"}, commands...)
		if err := goCmd(src, nil, args...); err != nil {
			return err
		}
		// The pause program runs alone in its image: static, without cgo.
		return goCmd(src, []string{"CGO_ENABLED=0"}, "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(partial, "pause"), "./pause")
	})
	return Bin(out), took, err
}

// buildOnce runs build into out+".partial" and renames it to out, unless
// out exists, holding an exclusive lock on root/lock meanwhile: of
// concurrent callers (test processes) one builds and the others wait,
// then find out built. It returns how long building took (0 when out was
// there).
func buildOnce(root, out string, build func(partial string) error) (time.Duration, error) {
	lock, err := os.OpenFile(filepath.Join(root, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return 0, fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(out); err == nil {
		return 0, nil
	}
	began := time.Now()
	partial := out + ".partial"
	os.RemoveAll(partial)
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return 0, err
	}
	if err := build(partial); err != nil {
		return 0, err
	}
	if err := os.Rename(partial, out); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// goCmd runs the go command in the build module, out of any workspace
// and with its go.sum as it is.
func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s (in %s): %v: %s", strings.Join(args, " "), dir, err, tail(string(out), 3000))
	}
	return nil
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

package testctr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// CacheDirVar names the directory the base image is cached in; by
// default a directory under the system's temp dir, shared by every test
// package (and every run) on the machine.
const CacheDirVar = "SHOAL_TESTCTR_CACHE"

// sourcesFile is the machine's apt sources (deb822), the mirror
// mmdebstrap uses: the one every Debian package here comes from.
const sourcesFile = "/etc/apt/sources.list.d/debian.sources"

// baseRecipe is mmdebstrap's arguments for the base image (less the
// output path): Debian 12 minbase with python3, documentation left out.
var baseRecipe = []string{
	"--variant=minbase", "--include=python3", "--mode=root", "--format=tar",
	"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
	"--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-exclude=/usr/share/info/*",
	"bookworm",
}

// BaseTarball returns the base image's root file system as a tarball
// (for `podman import`), building it with mmdebstrap when the cache has
// none for this recipe and mirror, and how long building took (0 when
// cached). Concurrent test packages wait on a file lock for one build.
func BaseTarball() (string, time.Duration, error) {
	dir := os.Getenv(CacheDirVar)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "shoal-testctr-cache")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	sources, err := os.ReadFile(sourcesFile)
	if err != nil {
		return "", 0, fmt.Errorf("the machine's apt sources (mmdebstrap's mirror): %w", err)
	}
	sum := sha256.Sum256([]byte(strings.Join(baseRecipe, "\n") + "\n" + string(sources)))
	tarball := filepath.Join(dir, "base-"+hex.EncodeToString(sum[:6])+".tar")
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", 0, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", 0, fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(tarball); err == nil {
		return tarball, 0, nil
	}
	began := time.Now()
	partial := tarball + ".partial"
	args := append(append([]string{}, baseRecipe...), partial, sourcesFile)
	out, err := exec.Command("mmdebstrap", args...).CombinedOutput()
	if err != nil {
		os.Remove(partial)
		return "", 0, fmt.Errorf("mmdebstrap %s: %v: %s", strings.Join(args, " "), err, tail(string(out), 2000))
	}
	if err := os.Rename(partial, tarball); err != nil {
		return "", 0, err
	}
	return tarball, time.Since(began), nil
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

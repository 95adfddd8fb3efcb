package testctr

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// seedDir is where the registry storage holding the base image built
// from tarball is cached: beside the tarball, named after it and the
// path it is pushed as, so that a new base image (another recipe or
// mirror) or path gets a seed of its own.
func seedDir(tarball string) string {
	return strings.TrimSuffix(tarball, ".tar") + "-" + strings.NewReplacer("/", "_", ":", "_").Replace(PushedBase) + ".registry"
}

// lockCache takes the cache directory's file lock (the one BaseTarball
// builds under) and returns its release.
func lockCache(tarball string) (func(), error) {
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(tarball), "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, err
	}
	return func() { unix.Flock(int(lock.Fd()), unix.LOCK_UN); lock.Close() }, nil
}

// seedRegistries copies the cached registry storage (the base image
// pushed as PushedBase) into each of dirs, a registry's storage root, and
// says whether it did; false (no seed yet, or a copy failed) leaves the
// dirs absent and the caller pushes. A registry's storage does not depend
// on its auth, so one seed serves both registries.
func seedRegistries(tarball string, dirs ...string) bool {
	unlock, err := lockCache(tarball)
	if err != nil {
		return false
	}
	defer unlock()
	seed := seedDir(tarball)
	if _, err := os.Stat(seed); err != nil {
		return false
	}
	for _, d := range dirs {
		if err := copyTree(seed, d); err != nil {
			for _, d := range dirs {
				os.RemoveAll(d)
			}
			return false
		}
	}
	return true
}

// saveRegistrySeed keeps a copy of dir, a registry's storage with the
// base image just pushed, as the seed later set-ups start from; a failure
// only costs them the push.
func saveRegistrySeed(tarball, dir string) {
	unlock, err := lockCache(tarball)
	if err != nil {
		return
	}
	defer unlock()
	seed := seedDir(tarball)
	if _, err := os.Stat(seed); err == nil {
		return
	}
	partial := seed + ".partial"
	os.RemoveAll(partial)
	if err := copyTree(dir, partial); err != nil {
		os.RemoveAll(partial)
		return
	}
	if err := os.Rename(partial, seed); err != nil {
		os.RemoveAll(partial)
	}
}

// copyTree copies the directory from to to (which must not exist),
// keeping modes.
func copyTree(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return exec.Command("cp", "-a", from, to).Run()
}

package testctr

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// InstanceImageRef is the test instance image's local reference, built
// from images/instance/Containerfile on the base image.
const InstanceImageRef = "localhost/shoal-test/instance:1"

var (
	instanceOnce sync.Once
	instanceErr  error
)

// InstanceImage builds the repository's compute instance image
// (images/instance/Containerfile) on the base image into the shared
// podman store, once per test process, and returns its reference. The
// built image is saved in the cache directory, named by the hash of the
// Containerfile and the base, so later runs load it rather than build it
// (a build installs Jupyter from the apt mirror: about a minute). It also
// makes sure podman can give containers user namespaces (SubIDs).
func InstanceImage(t testing.TB) string {
	t.Helper()
	ref, err := Shared(t).BuildInstanceImage()
	if err != nil {
		t.Fatalf("instance image: %v", err)
	}
	return ref
}

// BuildInstanceImage is InstanceImage for a program (the benchmarks)
// that set up e itself: it builds or loads the image once per process
// and returns its reference.
func (e *Env) BuildInstanceImage() (string, error) {
	instanceOnce.Do(func() {
		if instanceErr = SubIDs(); instanceErr == nil {
			instanceErr = e.buildInstance()
		}
	})
	return InstanceImageRef, instanceErr
}

// containerfileDir is images/instance in this repository.
func containerfileDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "images", "instance")
}

func (e *Env) buildInstance() error {
	dir := containerfileDir()
	recipe, err := os.ReadFile(filepath.Join(dir, "Containerfile"))
	if err != nil {
		return err
	}
	base, _, err := BaseTarball()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(append(recipe, []byte("\n"+filepath.Base(base))...))
	cache := filepath.Join(filepath.Dir(base), "instance-"+hex.EncodeToString(sum[:6])+".tar")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(base), "instance.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(cache); err == nil {
		if err := e.podman(ctx, "load", "-i", cache); err == nil {
			return nil
		}
		os.Remove(cache) // a broken save: build again
	}
	if err := e.podman(ctx, "build", "--pull=never", "--network=host", "--build-arg", "BASE="+e.BaseImage,
		"-t", InstanceImageRef, dir); err != nil {
		return err
	}
	partial := cache + ".partial"
	if err := e.podman(ctx, "save", "-o", partial, InstanceImageRef); err != nil {
		os.Remove(partial)
		return err
	}
	return os.Rename(partial, cache)
}

// subIDRange is the range the tests give podman's "containers" user when
// the machine has none: above the usual per-user ranges (100000+).
const subIDRange = "containers:2000000:1000000"

// SubIDs makes sure /etc/subuid and /etc/subgid have a range for the
// "containers" user, which podman (as root) takes user namespaces
// (userns "auto") from; as root it adds subIDRange where none is, and
// otherwise it fails saying what to add.
func SubIDs() error {
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		has, err := hasEntry(f, "containers")
		if err != nil {
			return err
		}
		if has {
			continue
		}
		if os.Geteuid() != 0 {
			return fmt.Errorf("%s has no range for the user \"containers\" (podman's userns auto needs one): add %q", f, subIDRange)
		}
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(fh, subIDRange)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hasEntry reports whether a subordinate id file has a line for name.
func hasEntry(path, name string) (bool, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), name+":") {
			return true, nil
		}
	}
	return false, sc.Err()
}

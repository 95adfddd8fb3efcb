package testctr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Resetting a store leaves the host's networks: a network another store
// made (as the subnet networks of another test package's containers)
// is still there after ResetStore of a store of its own. (A plain
// `podman system reset` removed them all: e2e TestInstancesInASubnet's
// job then found its subnet's network gone, made it anew, and could not
// reach the instances on the old one.)
func TestResetStoreLeavesTheHostsNetworks(t *testing.T) {
	testenv.Containers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// podman refuses a run root over 50 characters: short folders.
	store := func() []string {
		d, err := os.MkdirTemp("", "srs-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return []string{"--root", filepath.Join(d, "root"), "--runroot", filepath.Join(d, "run"), "--tmpdir", filepath.Join(d, "tmp")}
	}
	podman := func(store []string, args ...string) (string, error) {
		// The host's configuration, and so its network config dir, as
		// another package's podman has.
		out, err := exec.Command("podman", append(append([]string{"--runtime", "runc"}, store...), args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	var b [6]byte
	rand.Read(b[:])
	name := "shoal-test-reset-" + hex.EncodeToString(b[:])
	other := store()
	if out, err := podman(other, "network", "create", "--internal", name); err != nil {
		t.Fatalf("podman network create: %v: %s", err, out)
	}
	t.Cleanup(func() { podman(other, "network", "rm", name) })

	if err := ResetStore(ctx, "", store()...); err != nil {
		t.Fatal(err)
	}
	if out, err := podman(other, "network", "exists", name); err != nil {
		t.Fatalf("the reset of a store of its own removed the host's network %s: %v %s", name, err, out)
	}
}

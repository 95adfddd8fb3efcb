package e2e_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A port another process holds: `shoal server` says so and names
// --listen, and leaves no data dir, database or key behind (it binds
// before it makes any of them).
func TestServerPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	_, stderr, code := run(t, childEnv(home), "server", "--listen", ln.Addr().String(), "--data-dir", data, "--nodes-dir", reachableDir(t, "shoal-e2e-nodes-"))
	if code == 0 {
		t.Fatalf("the server started on a port in use: %s", stderr)
	}
	for _, want := range []string{ln.Addr().String(), "already in use", "--listen"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(data)
		t.Errorf("the data dir was made before the bind failed (%v): %v", err, entries)
	}
}

// At start the server says where its secrets key is and how another
// server sharing the store uses it (the same file, secrets_key_file).
func TestServerSaysHowToShareTheSecretsKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	key := filepath.Join(s.dataDir, "keys", "workload.key")
	if _, err := os.Stat(key); err != nil {
		t.Fatal(err)
	}
	log := s.log()
	for _, want := range []string{"secrets_key_file=" + key, "every server sharing this store needs this same file", "secrets_key_file: <its path>"} {
		if !strings.Contains(log, want) {
			t.Errorf("the server's log lacks %q:\n%s", want, log)
		}
	}
}

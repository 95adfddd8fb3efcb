package sshd_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRandom(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustEqualFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d sent", path, len(got), len(want))
	}
}

// TestSCP copies up and down with OpenSSH 9's scp, over SFTP by default
// and with the legacy protocol (-O), which runs the system's scp.
func TestSCP(t *testing.T) {
	f := newFixture(t)
	local := filepath.Join(f.dir, "data.bin")
	data := writeRandom(t, local, 1<<20+123) // more than a channel window
	for _, mode := range []struct {
		name string
		opts []string
	}{{"sftp", nil}, {"legacy", []string{"-O"}}} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.name == "legacy" {
				openssh(t, "scp") // the server side of scp -O is `scp -t` on the instance
			}
			up := "up-" + mode.name + ".bin"
			args := append(append(f.opts(f.key), mode.opts...), "-P", f.port(), local, "azureuser@127.0.0.1:~/"+up)
			if r := f.run("", "scp", args...); r.code != 0 {
				t.Fatalf("scp up: exit %d, %s", r.code, r.err)
			}
			mustEqualFile(t, filepath.Join(f.home, up), data)
			down := filepath.Join(f.dir, "down-"+mode.name+".bin")
			args = append(append(f.opts(f.key), mode.opts...), "-P", f.port(), "azureuser@127.0.0.1:"+up, down)
			if r := f.run("", "scp", args...); r.code != 0 {
				t.Fatalf("scp down: exit %d, %s", r.code, r.err)
			}
			mustEqualFile(t, down, data)
		})
	}
}

func TestSFTPBatch(t *testing.T) {
	f := newFixture(t)
	local := filepath.Join(f.dir, "data.bin")
	data := writeRandom(t, local, 200_000)
	got := filepath.Join(f.dir, "got.bin")
	batch := filepath.Join(f.dir, "batch")
	script := "pwd\nmkdir sub\nput " + local + " sub/s.bin\nls sub\nget sub/s.bin " + got + "\nrename sub/s.bin sub/t.bin\n"
	if err := os.WriteFile(batch, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.run("", "sftp", append(f.opts(f.key), "-P", f.port(), "-b", batch, "azureuser@127.0.0.1")...)
	if r.code != 0 {
		t.Fatalf("sftp: exit %d, stdout %s, stderr %s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.out, "Remote working directory: "+f.home) {
		t.Errorf("sftp starts in %q, want the home %s", r.out, f.home)
	}
	mustEqualFile(t, filepath.Join(f.home, "sub", "t.bin"), data)
	mustEqualFile(t, got, data)
}

package sealing_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/sealing"
)

func TestKeyFileIsCreatedPrivateAndReusedAndSealsByContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "workload.key")
	k, err := sealing.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %04o", p, fi.Mode(), err, want)
		}
	}
	s, err := k.Seal([]byte("-----BEGIN PRIVATE KEY-----"), "kid-1")
	if err != nil || !sealing.IsSealed(s) || strings.Contains(s, "PRIVATE") {
		t.Fatalf("sealed %q %v", s, err)
	}
	again, err := sealing.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := again.Open(s, "kid-1"); err != nil || string(b) != "-----BEGIN PRIVATE KEY-----" {
		t.Fatalf("opened with the reloaded key: %q %v", b, err)
	}
	if _, err := again.Open(s, "kid-2"); err == nil {
		t.Fatal("a value sealed for one record opened for another")
	}
	other, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(s, "kid-1"); err != sealing.ErrWrongKey {
		t.Fatalf("opened with another key: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sealing.LoadOrCreate(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key file others can read: %v", err)
	}
}

// MAC is stable for one key, differs by key, by purpose and by message,
// and is not the HMAC under the raw sealing key itself.
func TestMAC(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, sealing.KeySize)
	k1, _ := sealing.New(raw)
	k1again, _ := sealing.New(raw)
	k2, _ := sealing.New(bytes.Repeat([]byte{8}, sealing.KeySize))
	a := k1.MAC("run", []byte("att-1"))
	if !bytes.Equal(a, k1again.MAC("run", []byte("att-1"))) {
		t.Error("the same key gives another MAC")
	}
	for name, other := range map[string][]byte{
		"another key":                 k2.MAC("run", []byte("att-1")),
		"another purpose":             k1.MAC("runs", []byte("att-1")),
		"another message":             k1.MAC("run", []byte("att-2")),
		"purpose and message shifted": k1.MAC("ru", []byte("natt-1")),
	} {
		if bytes.Equal(a, other) {
			t.Errorf("%s gives the same MAC", name)
		}
	}
	h := hmac.New(sha256.New, raw)
	h.Write([]byte("run\x00att-1"))
	if bytes.Equal(a, h.Sum(nil)) {
		t.Error("MAC uses the sealing key itself")
	}
}

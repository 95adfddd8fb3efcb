package sshd_test

import (
	"strings"
	"testing"
)

func TestWrongKeyRefused(t *testing.T) {
	f := newFixture(t)
	other, _ := newKey(t, f.dir, "other", "ed25519")
	r := f.sshAs(other, "azureuser", nil, "true")
	if r.code != 255 || !strings.Contains(r.err, "Permission denied (publickey)") {
		t.Fatalf("another key: exit %d, stderr %s", r.code, r.err)
	}
}

func TestOtherUserRefused(t *testing.T) {
	f := newFixture(t)
	for _, user := range []string{"root", "azureuser2", ""} {
		args := f.opts(f.key)
		if user != "" {
			args = append(args, "-l", user)
		}
		args = append(args, "-p", f.port(), "127.0.0.1", "true")
		r := f.run("", "ssh", args...)
		if r.code != 255 || !strings.Contains(r.err, "Permission denied") {
			t.Fatalf("user %q: exit %d, stderr %s", user, r.code, r.err)
		}
	}
}

func TestOnlyPublicKeyOffered(t *testing.T) {
	f := newFixture(t)
	r := f.sshAs(f.key, "azureuser", []string{"-o", "PreferredAuthentications=password,keyboard-interactive"}, "true")
	if r.code != 255 || !strings.Contains(r.err, "Permission denied (publickey)") {
		t.Fatalf("password login: exit %d, stderr %s", r.code, r.err)
	}
}

func TestKeysChangeAtRuntime(t *testing.T) {
	f := newFixture(t)
	f.setKeys()
	if r := f.ssh("true"); r.code != 255 {
		t.Fatalf("no key authorized, yet exit %d", r.code)
	}
	f.setKeys(f.pub)
	if r := f.ssh("true"); r.code != 0 {
		t.Fatalf("key set after start: exit %d, %s", r.code, r.err)
	}
	other, otherPub := newKey(t, f.dir, "rotated", "rsa")
	f.setKeys(otherPub)
	if r := f.ssh("true"); r.code != 255 {
		t.Fatalf("the replaced key still logs in (exit %d)", r.code)
	}
	if r := f.sshAs(other, "azureuser", nil, "echo rsa"); r.code != 0 || r.out != "rsa\n" {
		t.Fatalf("the new RSA key: exit %d, %q %s", r.code, r.out, r.err)
	}
}

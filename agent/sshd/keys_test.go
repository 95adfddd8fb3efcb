package sshd_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/sshd"
)

// exportKey writes a public key in another form with ssh-keygen -e.
func exportKey(t *testing.T, pub, form string) string {
	t.Helper()
	out, err := exec.Command(openssh(t, "ssh-keygen"), "-e", "-m", form, "-f", pub).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -e -m %s: %v", form, err)
	}
	return string(out)
}

func sameKey(t *testing.T, what string, got, want ssh.PublicKey) {
	t.Helper()
	if !bytes.Equal(got.Marshal(), want.Marshal()) {
		t.Fatalf("%s parsed to another key", what)
	}
}

// TestParseKeyForms reads the forms Azure accepts: the OpenSSH line and
// the multi-line PEM (PKCS#1, PKIX) and SSH2 (RFC 4716) forms.
func TestParseKeyForms(t *testing.T) {
	dir := t.TempDir()
	rsaKey, rsaPub := newKey(t, dir, "id_rsa", "rsa")
	ecKey, ecPub := newKey(t, dir, "id_ecdsa", "ecdsa")
	cases := map[string]struct {
		text string
		want ssh.PublicKey
	}{
		"RSA PKCS#1 PEM": {exportKey(t, rsaKey+".pub", "PEM"), rsaPub},
		"RSA PKIX PEM":   {exportKey(t, rsaKey+".pub", "PKCS8"), rsaPub},
		"RSA RFC 4716":   {exportKey(t, rsaKey+".pub", "RFC4716"), rsaPub},
		"ECDSA PKIX PEM": {exportKey(t, ecKey+".pub", "PKCS8"), ecPub},
		"ECDSA RFC 4716": {exportKey(t, ecKey+".pub", "RFC4716"), ecPub},
	}
	// PuTTYgen's "Save public key": CRLF lines, a quoted comment, here
	// long enough to be continued with a backslash.
	putty := regexp.MustCompile(`(?m)^Comment: .*$`).ReplaceAllString(exportKey(t, rsaKey+".pub", "RFC4716"), "Comment: \"rsa-key-20260102 a comment long enough \\\nto continue\"")
	cases["RSA PuTTYgen"] = struct {
		text string
		want ssh.PublicKey
	}{strings.ReplaceAll(putty, "\n", "\r\n"), rsaPub}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(edPub)
	if err != nil {
		t.Fatal(err)
	}
	edSSH, _ := ssh.NewPublicKey(edPub)
	cases["Ed25519 PKIX PEM"] = struct {
		text string
		want ssh.PublicKey
	}{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), edSSH}
	line, err := os.ReadFile(rsaKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	cases["OpenSSH line, CRLF and spaces"] = struct {
		text string
		want ssh.PublicKey
	}{"  " + strings.TrimSpace(string(line)) + "\r\n", rsaPub}
	for name, c := range cases {
		got, err := sshd.ParseAuthorizedKey(c.text)
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, c.text)
			continue
		}
		sameKey(t, name, got, c.want)
	}
}

func TestParseAuthorizedKeys(t *testing.T) {
	dir := t.TempDir()
	rsaKey, rsaPub := newKey(t, dir, "id_rsa", "rsa")
	edKey, edPub := newKey(t, dir, "id_ed25519", "ed25519")
	rsaLine, _ := os.ReadFile(rsaKey + ".pub")
	edLine, _ := os.ReadFile(edKey + ".pub")
	file := "# my keys\n" + string(rsaLine) + "\n\n" + string(edLine)
	keys, err := sshd.ParseAuthorizedKeys([]string{file, exportKey(t, edKey+".pub", "RFC4716")})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Fatalf("%d keys, want 3", len(keys))
	}
	sameKey(t, "first", keys[0], rsaPub)
	sameKey(t, "second", keys[1], edPub)
	sameKey(t, "third", keys[2], edPub)
	if keys, err := sshd.ParseAuthorizedKeys(nil); err != nil || len(keys) != 0 {
		t.Fatalf("no entries: %v %v", keys, err)
	}
	if _, err := sshd.ParseAuthorizedKey(file); err == nil {
		t.Fatal("ParseAuthorizedKey took two keys as one")
	}
	if _, err := sshd.ParseAuthorizedKeys([]string{string(rsaLine), "garbage"}); err == nil {
		t.Fatal("a bad entry among good ones passed")
	}
}

func TestParseKeyErrors(t *testing.T) {
	dir := t.TempDir()
	rsaKey, _ := newKey(t, dir, "id_rsa", "rsa")
	private, err := os.ReadFile(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := exportKey(t, rsaKey+".pub", "PEM")
	publicLine, err := os.ReadFile(rsaKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ text, want string }{
		"empty":             {"  \n", "empty"},
		"garbage":           {"hello world", "not a public key"},
		"bad base64":        {"ssh-rsa notbase64!", "not a public key"},
		"private key":       {string(private), "private key"},
		"PKCS#8 private":    {"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "private key"},
		"PuTTY private":     {"PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\n", "PuTTY private key"},
		"truncated PEM":     {strings.Join(strings.Split(pkcs1, "\n")[:3], "\n"), "no END line"},
		"certificate":       {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "not a public key"},
		"options":           {`command="/bin/true" ` + strings.TrimSpace(string(publicLine)), "options"},
		"corrupt PEM body":  {"-----BEGIN RSA PUBLIC KEY-----\nAAAA\n-----END RSA PUBLIC KEY-----\n", "cannot be read"},
		"corrupt SSH2 body": {"---- BEGIN SSH2 PUBLIC KEY ----\n!!!!\n---- END SSH2 PUBLIC KEY ----\n", "not base64"},
	}
	for name, c := range cases {
		_, err := sshd.ParseAuthorizedKey(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

package sshd

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
)

// ParseAuthorizedKey reads a public key in any form Azure accepts for an
// instance: the single-line OpenSSH form ("ssh-rsa AAAA... comment",
// ssh-ed25519, ecdsa-sha2-*), or a multi-line form — PEM "BEGIN PUBLIC
// KEY" (PKIX), PEM "BEGIN RSA PUBLIC KEY" (PKCS#1), or RFC 4716 "---- BEGIN
// SSH2 PUBLIC KEY ----" as PuTTYgen writes it.
func ParseAuthorizedKey(s string) (ssh.PublicKey, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "---- BEGIN SSH2 PUBLIC KEY ----"):
		return parseRFC4716(s)
	case strings.HasPrefix(s, "-----BEGIN"):
		block, _ := pem.Decode([]byte(s))
		if block == nil {
			return nil, errors.New("the PEM block cannot be read")
		}
		var pub any
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		default:
			return nil, fmt.Errorf("a PEM %q block is not a public key", block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("the PEM public key cannot be read: %w", err)
		}
		return ssh.NewPublicKey(pub)
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("not an SSH public key (ssh-rsa, ssh-ed25519, ecdsa-sha2-... or PEM): %w", err)
	}
	return k, nil
}

// parseRFC4716 reads the SSH2 public key format (RFC 4716).
func parseRFC4716(s string) (ssh.PublicKey, error) {
	var body strings.Builder
	inHeader := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "---- "):
			continue
		case inHeader:
			inHeader = strings.HasSuffix(line, "\\")
			continue
		case strings.Contains(line, ":"):
			inHeader = strings.HasSuffix(line, "\\")
			continue
		}
		body.WriteString(line)
	}
	raw, err := base64.StdEncoding.DecodeString(body.String())
	if err != nil {
		return nil, fmt.Errorf("the SSH2 public key's body is not base64: %w", err)
	}
	return ssh.ParsePublicKey(raw)
}

// ParseAuthorizedKeys reads several keys, one per entry; multi-line
// forms are one entry each.
func ParseAuthorizedKeys(entries []string) ([]ssh.PublicKey, error) {
	var out []ssh.PublicKey
	for _, e := range entries {
		k, err := ParseAuthorizedKey(e)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// loadHostKey reads the host key at path, creating an ed25519 key there
// (mode 0600) when there is none: an instance's host key stays the same
// across stop and start, so known_hosts entries stay valid.
func loadHostKey(path string) (ssh.Signer, error) {
	if b, err := os.ReadFile(path); err == nil {
		return ssh.ParsePrivateKey(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "shoal instance host key")
	if err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

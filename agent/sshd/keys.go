package sshd

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// ParseAuthorizedKey reads one public key in any form Azure accepts for
// an instance's SSH key: the single-line OpenSSH form ("ssh-rsa AAAA...
// comment", ssh-ed25519, ecdsa-sha2-*), or a multi-line form: PEM
// "-----BEGIN PUBLIC KEY-----" (PKIX), PEM "-----BEGIN RSA PUBLIC
// KEY-----" (PKCS#1), or RFC 4716 "---- BEGIN SSH2 PUBLIC KEY ----" as
// PuTTYgen and `ssh-keygen -e` write it.
func ParseAuthorizedKey(s string) (ssh.PublicKey, error) {
	entries, err := splitKeys(s)
	if err != nil {
		return nil, err
	}
	switch len(entries) {
	case 0:
		return nil, errors.New("ssh key: empty; give a public key such as the content of ~/.ssh/id_rsa.pub")
	case 1:
		return parseKey(entries[0])
	default:
		return nil, fmt.Errorf("ssh key: %d keys where one was expected", len(entries))
	}
}

// ParseAuthorizedKeys reads the keys of several entries. An entry may
// hold one key in any form ParseAuthorizedKey reads, or several keys one
// per line as in an authorized_keys file (blank lines and # comments
// are skipped).
func ParseAuthorizedKeys(entries []string) ([]ssh.PublicKey, error) {
	var out []ssh.PublicKey
	for _, e := range entries {
		keys, err := splitKeys(e)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			pub, err := parseKey(k)
			if err != nil {
				return nil, err
			}
			out = append(out, pub)
		}
	}
	return out, nil
}

// splitKeys cuts text into keys: single lines, or whole multi-line
// blocks from their BEGIN line to their END line.
func splitKeys(text string) ([]string, error) {
	var keys []string
	var block []string
	end := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line) // also drops the \r of pasted Windows text
		switch {
		case end != "":
			block = append(block, line)
			if strings.HasPrefix(line, end) {
				keys = append(keys, strings.Join(block, "\n"))
				block, end = nil, ""
			}
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "---- BEGIN "):
			block, end = []string{line}, "---- END "
		case strings.HasPrefix(line, "-----BEGIN "):
			block, end = []string{line}, "-----END "
		case strings.HasPrefix(line, "PuTTY-User-Key-File"):
			return nil, errors.New("ssh key: this is a PuTTY private key (.ppk); give the public key (PuTTYgen's \"Save public key\" or the OpenSSH line it shows)")
		default:
			keys = append(keys, line)
		}
	}
	if end != "" {
		return nil, fmt.Errorf("ssh key: %q has no END line", block[0])
	}
	return keys, nil
}

// parseKey reads one key: a single line or one whole block.
func parseKey(s string) (ssh.PublicKey, error) {
	switch {
	case strings.HasPrefix(s, "---- BEGIN SSH2 PUBLIC KEY ----"):
		return parseRFC4716(s)
	case strings.HasPrefix(s, "---- BEGIN "), strings.HasPrefix(s, "-----BEGIN "):
		return parsePEM(s)
	}
	k, _, options, rest, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("ssh key: not a public key in a known form (ssh-rsa..., ssh-ed25519..., ecdsa-sha2-..., or PEM/SSH2 multi-line): %w", err)
	}
	if len(options) > 0 {
		// Ignoring command=, from= and the like would grant more than
		// the line says: refuse the key instead.
		return nil, fmt.Errorf("ssh key: authorized_keys options (%s) are not supported; give the key alone", strings.Join(options, ","))
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, errors.New("ssh key: text after the key")
	}
	return k, nil
}

// parsePEM reads PEM public keys: PKIX ("PUBLIC KEY", any algorithm the
// SSH library knows) and PKCS#1 ("RSA PUBLIC KEY").
func parsePEM(s string) (ssh.PublicKey, error) {
	first, _, _ := strings.Cut(s, "\n")
	if strings.Contains(first, "PRIVATE KEY") {
		return nil, errors.New("ssh key: this is a private key; give the public key (the .pub file)")
	}
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, fmt.Errorf("ssh key: the %s block cannot be read", strings.Trim(first, "- "))
	}
	var pub any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		return nil, fmt.Errorf("ssh key: a PEM %q block is not a public key (want PUBLIC KEY or RSA PUBLIC KEY)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh key: the PEM %s cannot be read: %w", block.Type, err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	return k, nil
}

// parseRFC4716 reads the SSH2 public key format (RFC 4716): BEGIN line,
// headers ("Comment: ...", continued by a trailing backslash), base64 of
// the SSH wire form, END line.
func parseRFC4716(s string) (ssh.PublicKey, error) {
	var body strings.Builder
	continued := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case continued:
			continued = strings.HasSuffix(line, `\`)
		case line == "" || strings.HasPrefix(line, "---- "):
		case strings.Contains(line, ":"): // base64 has no colon, headers do
			continued = strings.HasSuffix(line, `\`)
		default:
			body.WriteString(line)
		}
	}
	raw, err := base64.StdEncoding.DecodeString(body.String())
	if err != nil {
		return nil, fmt.Errorf("ssh key: the SSH2 public key's body is not base64: %w", err)
	}
	k, err := ssh.ParsePublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("ssh key: the SSH2 public key cannot be read: %w", err)
	}
	return k, nil
}

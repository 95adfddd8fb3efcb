package compute

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// adminPasswordScheme prefixes a stored admin password hash: the salt and
// the hash are those a cluster node checks a login with (NodePasswordHash),
// so the server hands the stored pair to its nodes as it is.
const adminPasswordScheme = "sha256"

// HashAdminPassword returns the stored form of a cluster's admin password:
// "sha256:<salt>:<hex SHA-256 of salt and password>" with a fresh 16-byte
// salt read from random.
func HashAdminPassword(random io.Reader, password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := io.ReadFull(random, salt); err != nil {
		return "", fmt.Errorf("admin password salt: %w", err)
	}
	s := hex.EncodeToString(salt)
	return adminPasswordScheme + ":" + s + ":" + NodePasswordHash(s, password), nil
}

// PasswordSaltAndHash returns the salt and hash of the stored admin
// password; ok is false when there is none (or it is malformed).
func (s *SSHSettings) PasswordSaltAndHash() (salt, hash string, ok bool) {
	if s == nil {
		return "", "", false
	}
	parts := strings.Split(s.AdminPasswordHash, ":")
	if len(parts) != 3 || parts[0] != adminPasswordScheme || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// PasswordMatches reports whether password is the stored admin password,
// comparing in constant time.
func (s *SSHSettings) PasswordMatches(password string) bool {
	salt, hash, ok := s.PasswordSaltAndHash()
	return ok && subtle.ConstantTimeCompare([]byte(NodePasswordHash(salt, password)), []byte(hash)) == 1
}

// SealAdminPassword replaces the clear admin password of spec by its
// salted hash before the spec is stored. On an existing compute, a
// document that repeats the stored password, or gives none (as `show`
// prints it), keeps the stored hash; a different password is left in
// the clear for the caller's fixed-field check to refuse. A hash sent by
// a client is ignored: only the server makes one.
func SealAdminPassword(spec *ComputeSpec, existing *Compute, random io.Reader) error {
	s := spec.SSHSettings
	if s == nil {
		return nil
	}
	s.AdminPasswordHash = ""
	if existing != nil {
		if old := existing.SSHSettings; old != nil && (s.AdminPassword == "" || old.PasswordMatches(s.AdminPassword)) {
			s.AdminPassword, s.AdminPasswordHash = "", old.AdminPasswordHash
		}
		return nil
	}
	if s.AdminPassword == "" {
		return nil
	}
	h, err := HashAdminPassword(random, s.AdminPassword)
	if err != nil {
		return err
	}
	s.AdminPassword, s.AdminPasswordHash = "", h
	return nil
}

// NodePasswordHash is the hex SHA-256 of a salt and a password: what a
// cluster node compares an SSH login's password with (NodeSSH).
func NodePasswordHash(salt, password string) string {
	sum := sha256.Sum256([]byte(salt + "\x00" + password))
	return hex.EncodeToString(sum[:])
}

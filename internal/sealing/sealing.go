// Package sealing encrypts secrets the server keeps in its store (the
// workload token signing keys) with a key kept outside the database: a
// 0600 file of 32 random bytes, so a copy of the store alone (a backup, a
// read of the database) reveals no signing key. Several servers sharing a
// PostgreSQL store must be given the same key file.
package sealing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of the key: AES-256.
const KeySize = 32

// prefix starts every sealed value, so a clear value left by an older
// server is told from a sealed one.
const prefix = "sealed:v1:"

// Key seals and opens values with AES-256-GCM.
type Key struct {
	aead cipher.AEAD
	// mac is the key of MAC, derived from the sealing key so that one
	// secret file serves both and a MAC never reveals the sealing key.
	mac []byte
	// Path is the file the key was read from, for error messages.
	Path string
}

// LoadOrCreate reads the key file at path, or creates it (mode 0600, its
// directory 0700) with a fresh random key when there is none. A key file
// that others may read, or that holds no key, is refused.
func LoadOrCreate(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return create(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secrets key file %s has mode %04o: it must be readable by the server's user only (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != KeySize {
		return nil, fmt.Errorf("secrets key file %s must hold %d random bytes in base64 (e.g. `head -c %d /dev/urandom | base64`)", path, KeySize, KeySize)
	}
	return newKey(raw, path)
}

// create writes a new key file; O_EXCL makes two servers starting at once
// agree on one key (the loser reads the winner's).
func create(path string) (*Key, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreate(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(raw) + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	return newKey(raw, path)
}

// New returns a Key of raw (KeySize bytes), for tests and callers that keep
// the key elsewhere.
func New(raw []byte) (*Key, error) { return newKey(raw, "") }

func newKey(raw []byte, path string) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("secrets key: %d bytes, want %d", len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	d := hmac.New(sha256.New, raw)
	d.Write([]byte("shoal/sealing/mac-key"))
	return &Key{aead: aead, mac: d.Sum(nil), Path: path}, nil
}

// MAC returns HMAC-SHA256 of msg under a key of its own for purpose: a
// credential the server derives and checks again (a job's tracking
// token) instead of storing it. Every replica with the same key file
// derives the same value.
func (k *Key) MAC(purpose string, msg []byte) []byte {
	h := hmac.New(sha256.New, k.mac)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(msg)
	return h.Sum(nil)
}

// IsSealed reports whether s is a sealed value.
func IsSealed(s string) bool { return strings.HasPrefix(s, prefix) }

// Seal encrypts plain, bound to context (e.g. the record's ID, so a sealed
// value cannot be moved to another record), with a random nonce.
func (k *Key) Seal(plain []byte, context string) (string, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.aead.Seal(nonce, nonce, plain, []byte(context))
	return prefix + base64.StdEncoding.EncodeToString(out), nil
}

// ErrWrongKey is returned by Open when the value was sealed with another
// key (or altered).
var ErrWrongKey = errors.New("it was sealed with another secrets key, or altered")

// Open decrypts a sealed value bound to context.
func (k *Key) Open(sealed, context string) ([]byte, error) {
	b64, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return nil, errors.New("not a sealed value")
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) < k.aead.NonceSize() {
		return nil, errors.New("malformed sealed value")
	}
	plain, err := k.aead.Open(nil, b[:k.aead.NonceSize()], b[k.aead.NonceSize():], []byte(context))
	if err != nil {
		return nil, ErrWrongKey
	}
	return plain, nil
}

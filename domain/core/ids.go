package core

import (
	"encoding/hex"
	"io"
)

// NewID returns prefix followed by 16 hex digits read from r (the
// services' injected randomness, so tests name things reproducibly).
func NewID(r io.Reader, prefix string) string {
	b := make([]byte, 8)
	_, _ = io.ReadFull(r, b)
	return prefix + hex.EncodeToString(b)
}

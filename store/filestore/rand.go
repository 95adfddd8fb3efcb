package filestore

import (
	"crypto/rand"
	"encoding/binary"
)

// randSuffix names temporary upload files so concurrent uploads never share one.
func randSuffix() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

package container

import (
	"bytes"
	"testing"
)

// The rest of a log read again after a stopped follow continues where
// the follow left off, stream by stream: nothing twice, nothing lost.
func TestSkippingWriterContinuesTheCopy(t *testing.T) {
	var out bytes.Buffer
	cw := &countingWriter{w: &out}
	cw.Write([]byte("line 1\nli"))
	sw := &skippingWriter{w: cw, skip: cw.n}
	for _, chunk := range []string{"line", " 1\nline 2\n", "line 3\n"} {
		if n, err := sw.Write([]byte(chunk)); err != nil || n != len(chunk) {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	if got, want := out.String(), "line 1\nline 2\nline 3\n"; got != want {
		t.Errorf("copied %q, want %q", got, want)
	}
}

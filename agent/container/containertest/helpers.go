package containertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// ctxFor is a context bounded for one step of a test.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// syncBuffer is a buffer the output copy writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// token is a random name part, so that tests and runs never collide.
func token() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// wantKind fails unless err is of kind.
func wantKind(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want one of kind %q", what, err, kind)
	}
}

// runToEnd runs spec, waits, removes the container, and returns its exit
// code, stdout and stderr.
func runToEnd(t *testing.T, rt container.Runtime, spec container.Spec) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	spec.Stdout, spec.Stderr = &stdout, &stderr
	ctx := ctxFor(t, 2*time.Minute)
	id, err := rt.Run(ctx, spec)
	if err != nil {
		t.Fatalf("run %v: %v", spec.Command, err)
	}
	defer func() {
		if err := rt.Remove(context.Background(), id); err != nil {
			t.Errorf("remove %s: %v", id, err)
		}
	}()
	code, err := rt.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return code, stdout.String(), stderr.String()
}

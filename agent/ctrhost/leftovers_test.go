package ctrhost

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// A node whose agent starts its engine removes what an earlier agent of
// the same node left, and nothing of another node that has the same name
// on a shared container store (another server's cluster, another test):
// e2e caught a test's new cpu-cluster-n1 removing another's running job.
func TestLeftoverSweepSparesASameNamedNodeOfAnotherEngine(t *testing.T) {
	env := testctr.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	open := func(dir string) (*Host, container.Runtime) {
		h := Open(ctx, Config{NodeID: "same-name-n1", WorkDir: dir, ContainerHost: env.Host, Clock: core.SystemClock{}}, log)
		t.Cleanup(h.Close)
		rt, _, err := h.Runtime(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h, rt
	}
	dirA := t.TempDir()
	a, rt := open(dirA)
	id, err := rt.Run(ctx, container.Spec{Image: env.BaseImage, Entrypoint: []string{"sleep", "300"},
		Labels: a.NodeLabels("same-name-n1"), Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.Background(), id) })
	mine := func() int {
		list, err := rt.List(ctx, a.NodeLabels("same-name-n1"))
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	open(t.TempDir()) // another engine's node of the same name starts
	if n := mine(); n != 1 {
		t.Fatalf("another node of the same name removed this node's running container: %d left", n)
	}
	open(dirA) // this node's agent again, after a kill: its leftover goes
	if n := mine(); n != 0 {
		t.Fatalf("the node's own leftover was not removed: %d left", n)
	}
}

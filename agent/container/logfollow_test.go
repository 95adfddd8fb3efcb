package container_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// A log follow that never ends after its container exited (podman's
// service does this now and then) does not hold Wait: after a grace it
// stops the follow and writes the rest of the log, read without
// following, each byte once.
func TestEngineWaitOutlivesAHungLogFollow(t *testing.T) {
	env := testctr.Shared(t)
	for _, c := range []struct {
		name  string
		limit int
	}{
		{"hung after the whole log", -1},
		{"hung after the first line", 8 + len("one\n")}, // a frame header and its line
	} {
		t.Run(c.name, func(t *testing.T) {
			code, err := runLogged(t, env, "echo one; sleep 0.2; echo err-one >&2; sleep 0.2; echo two; exit 3",
				func(e *container.Engine) { container.HangLogFollows(e, 300*time.Millisecond, c.limit) })
			if err != nil || code != 3 {
				t.Fatalf("Wait = %d, %v; want 3 (the follow hangs: Wait must not)", code, err)
			}
		})
	}
}

// A log follow that ends before the container's last lines (podman's
// service does this now and then for a container that exits at once)
// loses nothing: Wait reads the short log again and writes the rest,
// each byte once.
func TestEngineWaitCompletesAShortenedLogFollow(t *testing.T) {
	env := testctr.Shared(t)
	// A frame header and its line: the follow ends after "one".
	code, err := runLogged(t, env, "echo one; echo err-one >&2; echo two",
		func(e *container.Engine) { container.ShortenLogFollows(e, 8+len("one\n")) })
	if err != nil || code != 0 {
		t.Fatalf("Wait = %d, %v", code, err)
	}
}

// runLogged runs script in a container of the shared engine's base image
// on an engine that hook has set up, waits for it, and checks that its
// output came through whole ("one\ntwo\n" and "err-one\n"), each byte
// once; it returns Wait's answer.
func runLogged(t *testing.T, env *testctr.Env, script string, hook func(*container.Engine)) (int, error) {
	t.Helper()
	e, err := container.Open(context.Background(), container.Config{Host: env.Host, EnginePID: env.Podman.PID()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	hook(e)
	var stdout, stderr bytes.Buffer
	id, err := e.Run(context.Background(), container.Spec{
		Image: env.BaseImage, Command: []string{"sh", "-c", script}, Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Remove(context.Background(), id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, err := e.Wait(ctx, id)
	if stdout.String() != "one\ntwo\n" || stderr.String() != "err-one\n" {
		t.Errorf("stdout %q, stderr %q; want %q, %q", stdout.String(), stderr.String(), "one\ntwo\n", "err-one\n")
	}
	return code, err
}

package container

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// logFollowGrace is how long Wait lets a container's log follow run on
// after the container exited before it reads the rest of the log
// without following. podman's service (4.3) now and then never ends a
// follow of a container that has exited (about 1 in 50 short containers
// started together, seen in the e2e tests); the rank would then wait
// forever and its container stay behind.
const logFollowGrace = 2 * time.Second

// logCopy is the copy of one container's output to its writers: the
// follow that Run starts, and, should the follow not end, the rest read
// by finish.
type logCopy struct {
	done   chan struct{} // closed when the follow has ended
	cancel context.CancelFunc

	mu           sync.Mutex
	stream       io.ReadCloser // the follow's stream, once open
	cut          bool          // finish took over: the follow writes no more
	stdout       io.Writer
	stderr       io.Writer
	nOut, nErr   int
	followEnding func(io.ReadCloser) io.ReadCloser // tests: wraps the stream
}

// streamWriter counts what the follow wrote of one stream, and drops
// what it writes once finish took over.
type streamWriter struct {
	c      *logCopy
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if w.c.cut {
		return len(p), nil
	}
	out, n := w.c.stdout, &w.c.nOut
	if w.stderr {
		out, n = w.c.stderr, &w.c.nErr
	}
	written, err := out.Write(p)
	*n += written
	return written, err
}

// follow copies the container's log, following it, until the engine
// ends it (the container exited) or finish cancels it.
func (c *logCopy) follow(ctx context.Context, e *Engine, id string) {
	defer close(c.done)
	logs, err := e.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return
	}
	if c.followEnding != nil {
		logs = c.followEnding(logs)
	}
	c.mu.Lock()
	c.stream = logs
	cut := c.cut
	c.mu.Unlock()
	defer logs.Close()
	if cut {
		return
	}
	// Without a TTY the engine multiplexes stdout and stderr.
	_, _ = stdcopy.StdCopy(streamWriter{c: c}, streamWriter{c: c, stderr: true}, logs)
}

// recheckBelow is the size of output under which a follow that ended is
// checked against the whole log: podman's service (4.3) now and then
// ends the follow of a container that exits at once before its last
// lines (a CI run lost the second line of a two-line `cat`). Reading the
// log again is cheap for such short outputs; a long one is not read
// twice.
const recheckBelow = 1 << 20

// wait waits for the follow to end; if it has not ended grace after the
// container exited, it stops it. Either way, unless the follow ended
// after writing recheckBelow bytes or more, it then writes what the
// follow did not of the whole log, read without following.
func (c *logCopy) wait(ctx context.Context, e *Engine, id string, grace time.Duration) error {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
		c.mu.Lock()
		c.cut = true
		long := c.nOut+c.nErr >= recheckBelow
		c.mu.Unlock()
		if long {
			return nil
		}
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	c.mu.Lock()
	c.cut = true
	stream := c.stream
	nOut, nErr := c.nOut, c.nErr
	c.mu.Unlock()
	c.cancel()
	if stream != nil {
		stream.Close()
	}
	logs, err := e.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		fmt.Fprintf(c.stderr, "shoal: the container's log could not be read to its end: %v\n", err)
		return nil
	}
	defer logs.Close()
	var out, errOut bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errOut, logs); err != nil {
		fmt.Fprintf(c.stderr, "shoal: the container's log could not be read to its end: %v\n", err)
	}
	if out.Len() > nOut {
		c.stdout.Write(out.Bytes()[nOut:])
	}
	if errOut.Len() > nErr {
		c.stderr.Write(errOut.Bytes()[nErr:])
	}
	return nil
}

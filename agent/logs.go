package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/api"
)

// logShipper uploads a growing log file to the server in chunks, each at
// its offset, so a retried chunk overwrites rather than duplicates.
type logShipper struct {
	c      *api.AgentClient
	ref    shoal.RankRef
	path   string
	offset int64
}

func newLogShipper(c *api.AgentClient, ref shoal.RankRef, path string) *logShipper {
	return &logShipper{c: c, ref: ref, path: path}
}

// loop ships new output every 100 ms until ctx ends.
func (l *logShipper) loop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.ship(ctx, false)
		}
	}
}

// flush ships everything left, retrying while the server is away.
func (l *logShipper) flush(ctx context.Context) { l.ship(ctx, true) }

const logChunk = 512 << 10

func (l *logShipper) ship(ctx context.Context, persist bool) {
	f, err := os.Open(l.path)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, logChunk)
	for {
		n, err := f.ReadAt(buf, l.offset)
		if n > 0 {
			chunk := buf[:n]
			send := func() error { return l.c.WriteLog(ctx, l.ref, l.offset, chunk) }
			var serr error
			if persist {
				serr = retry(ctx, send)
			} else {
				serr = send()
			}
			if serr != nil {
				return
			}
			l.offset += int64(n)
		}
		if err != nil || n == 0 {
			if errors.Is(err, io.EOF) || n == 0 {
				return
			}
			return
		}
	}
}

package files

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/plainfile"
)

// LogShipper uploads a growing log file to the server in chunks, each at
// its offset, so a retried chunk overwrites rather than duplicates.
type LogShipper struct {
	c    *client.AgentClient
	ref  node.RankRef
	path string
	// Offset is how much of the log the server has.
	Offset int64
	// Max caps the log (the task's MaxLogBytes; 0: the default): past it
	// the file is cut, on the node, to max bytes and one marker line.
	Max int64
}

// NewLogShipper ships the log at path of rank ref through c.
func NewLogShipper(c *client.AgentClient, ref node.RankRef, path string) *LogShipper {
	return &LogShipper{c: c, ref: ref, path: path}
}

// Loop ships new output every 100 ms until ctx ends.
func (l *LogShipper) Loop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Ship(ctx)
		}
	}
}

// ShipAll ships everything from the current offset to the end of the
// file, once; it returns the first error (the offset stays at the last
// chunk that was accepted, so a later call resumes there).
func (l *LogShipper) ShipAll(ctx context.Context) error {
	// Without the poller's five idle system calls (plainfile): one
	// open of the log per ship.
	f, err := plainfile.Open(l.path, os.O_RDONLY, 0)
	if err != nil {
		return nil // no log written: nothing to ship
	}
	defer f.Close()
	// Most polls find nothing new: they cost a stat, not a buffer (a
	// chunk-sized buffer per poll was most of a busy agent's garbage).
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	if limit := l.limit(); end > limit {
		if end, err = cutLog(l.path, limit, end); err != nil {
			return err
		}
	}
	if end <= l.Offset {
		return nil
	}
	// Ship up to the size just seen, so the buffer fits what is there; what
	// is written meanwhile is the next poll's (the last call comes after
	// the processes have exited, when the size is final).
	buf := make([]byte, min(LogChunk, end-l.Offset))
	for l.Offset < end {
		n, rerr := f.ReadAt(buf[:min(int64(len(buf)), end-l.Offset)], l.Offset)
		if n > 0 {
			if err := l.c.WriteLog(ctx, l.ref, l.Offset, buf[:n]); err != nil {
				return err
			}
			l.Offset += int64(n)
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		if n == 0 {
			return nil // truncated meanwhile
		}
	}
	return nil
}

// LogChunk is the most of a log one upload carries.
const LogChunk = 512 << 10

// limit is the log's cap in force.
func (l *LogShipper) limit() int64 {
	return money.WorkspaceLimits{MaxLogBytes: l.Max}.LogCap()
}

// cutLog bounds a log of size bytes past its limit: the marker line is
// written at limit (once: a log already cut keeps its marker) and the
// file truncated after it. The job's processes append (O_APPEND) after
// the marker until the next poll cuts again, so the node's disk holds at
// most a poll's worth more. It returns the log's new size.
func cutLog(path string, limit, size int64) (int64, error) {
	marker := []byte(money.LogCutMarker(limit))
	end := limit + int64(len(marker))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	have := make([]byte, len(marker))
	if n, _ := f.ReadAt(have, limit); n != len(marker) || string(have) != string(marker) {
		if _, err := f.WriteAt(marker, limit); err != nil {
			return 0, err
		}
	}
	if err := f.Truncate(end); err != nil {
		return 0, err
	}
	return end, nil
}

// Ship ships new output, best effort: the final shipAll catches up.
func (l *LogShipper) Ship(ctx context.Context) { _ = l.ShipAll(ctx) }

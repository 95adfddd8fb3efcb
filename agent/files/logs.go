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
	f, end, err := l.open()
	if f == nil || err != nil {
		return err
	}
	defer f.Close()
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

// open opens the log and returns it with its size, the log cut to its
// cap first; a nil file when no log was written.
func (l *LogShipper) open() (*os.File, int64, error) {
	// Without the poller's five idle system calls (plainfile): one
	// open of the log per ship.
	f, err := plainfile.Open(l.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, nil // no log written: nothing to ship
	}
	// Most polls find nothing new: they cost a stat, not a buffer (a
	// chunk-sized buffer per poll was most of a busy agent's garbage).
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	end := fi.Size()
	if limit := l.limit(); end > limit {
		if end, err = cutLog(l.path, limit, end); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	return f, end, nil
}

// Tail returns the part of the log the server does not have, for a
// final report to carry (node.RankReport.Log) instead of an upload of
// its own: nil when there is none, or when it is longer than max
// (ShipAll uploads it then). The log is cut to its cap first, as
// ShipAll cuts it.
func (l *LogShipper) Tail(max int64) (*node.RankLogTail, error) {
	f, end, err := l.open()
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	if end <= l.Offset || end-l.Offset > max {
		return nil, nil
	}
	buf := make([]byte, end-l.Offset)
	n, err := f.ReadAt(buf, l.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n == 0 {
		return nil, nil // truncated meanwhile
	}
	return &node.RankLogTail{Offset: l.Offset, Data: buf[:n]}, nil
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

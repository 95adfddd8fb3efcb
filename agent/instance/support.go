package instance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// setupLogShipper uploads an instance's log (its setup log, or with
// write set an application's) as it grows, each chunk at its offset (so a
// retried chunk overwrites, never duplicates).
type setupLogShipper struct {
	c      *client.AgentClient
	path   string
	offset int64
	// write uploads a chunk; nil uploads to the setup log.
	write func(ctx context.Context, offset int64, data []byte) error
}

func (l *setupLogShipper) loop(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = l.ship(ctx)
		}
	}
}

// flush ships what is left, retrying for a while if the server is away.
func (l *setupLogShipper) flush(ctx context.Context) {
	for i := 0; i < 20; i++ {
		if l.ship(ctx) == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (l *setupLogShipper) ship(ctx context.Context) error {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, files.LogChunk)
	for {
		n, rerr := f.ReadAt(buf, l.offset)
		if n > 0 {
			write := l.write
			if write == nil {
				write = l.c.WriteSetupLog
			}
			if err := write(ctx, l.offset, buf[:n]); err != nil {
				return err
			}
			l.offset += int64(n)
		}
		if rerr != nil || n == 0 {
			if rerr == nil || errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
}

// clockTicks is the kernel's USER_HZ, the unit of /proc CPU times; 100 on
// every Linux that Go runs on.
const clockTicks = 100

// nodeCPUTicks sums the CPU time (user + system, in clock ticks) of the
// processes that belong to a node: those whose environment carries its ID
// and work dir, which every process of an instance does.
func nodeCPUTicks(nodeID, dir string, uid int) uint64 {
	var total uint64
	for _, pid := range procmark.FindNode(nodeID, dir) {
		// With an account of its own (uid >= 0), only that account's
		// processes count: anyone's process can carry a copy of the mark,
		// and another user's must not keep the instance from idling.
		if uid >= 0 {
			if fi, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
				continue
			}
		}
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		// After the command: state(0) ... utime(11) stime(12).
		if len(f) > 12 {
			u, _ := strconv.ParseUint(f[11], 10, 64)
			s, _ := strconv.ParseUint(f[12], 10, 64)
			total += u + s
		}
	}
	return total
}

// cpuPercent turns ticks used over an interval into percent of the
// machine's CPUs.
func cpuPercent(ticks uint64, over time.Duration) float64 {
	if over <= 0 {
		return 0
	}
	used := float64(ticks) / clockTicks
	return 100 * used / over.Seconds() / float64(runtime.NumCPU())
}

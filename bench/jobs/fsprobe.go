package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// mkdirCost returns the CPU time one mkdir takes in dir, measured over n
// folders made and removed. It is printed beside the figures because it
// moves them: an agent makes about seven folders and a few files a job,
// and on ext4 a folder whose block group holds many recently freed inodes
// (a /tmp that test suites fill and empty) makes each allocation scan
// past them — 240 µs a folder on this VM's /tmp against 17 µs on the same
// disk's /work (2026-12-01), which doubled the agents' CPU per job. Set
// TMPDIR to a quieter folder when it is high.
func mkdirCost(dir string, n int) (time.Duration, error) {
	probe, err := os.MkdirTemp(dir, "mkdir-probe-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(probe)
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &before); err != nil {
		return 0, err
	}
	for i := range n {
		if err := os.Mkdir(filepath.Join(probe, fmt.Sprint(i)), 0o700); err != nil {
			return 0, err
		}
	}
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &after); err != nil {
		return 0, err
	}
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	return cpu / time.Duration(n), nil
}

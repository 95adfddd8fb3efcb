package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Processes of the suite. The local provider starts each node as a `shoal
// agent` process in its own process group, and each job process in a
// process group of its own too; both outlive the server by design. The
// harness finds them through /proc:
//
//   - agents (and servers): their command line names the test's directory
//     (--work-dir <dir>/data/nodes/<id>) or the suite's shoal binary;
//   - job processes: their environment has SHOAL_JOB_NAME= and their working
//     directory, or SHOAL_OUTPUTS_DIR, is under the test's directory;
//   - every process an agent starts (jobs, an instance's applications,
//     notebook and shells): its SHOAL_NODE_DIR is under the test's directory.

var (
	suiteDirsMu sync.Mutex
	suiteDirsV  []string
)

// registerSuiteDir records a test directory whose processes TestMain checks
// for at the end.
func registerSuiteDir(dir string) {
	suiteDirsMu.Lock()
	defer suiteDirsMu.Unlock()
	suiteDirsV = append(suiteDirsV, dir)
}

func suiteDirs() []string {
	suiteDirsMu.Lock()
	defer suiteDirsMu.Unlock()
	return append([]string(nil), suiteDirsV...)
}

// procInfo is one process seen in /proc.
type procInfo struct {
	pid     int
	pgid    int
	cmdline string // arguments joined with spaces
	environ []byte // NUL-separated, with a trailing NUL
	cwd     string
}

func (p procInfo) String() string {
	return fmt.Sprintf("pid %d (pgid %d, cwd %s): %s", p.pid, p.pgid, p.cwd, p.cmdline)
}

// readProc reads a process; ok is false when it is gone or a zombie (a
// zombie has an empty command line).
func readProc(pid int) (procInfo, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil || len(cmd) == 0 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))}
	if env, err := os.ReadFile(dir + "/environ"); err == nil {
		p.environ = append(env, 0)
	}
	p.cwd, _ = os.Readlink(dir + "/cwd")
	p.pgid, _ = syscall.Getpgid(pid)
	return p, true
}

// allProcs lists the live processes other than this one.
func allProcs() []procInfo {
	entries, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(filepath.Base(e))
		if err != nil || pid == self {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// envValue returns the value of key in p's environment.
func (p procInfo) envValue(key string) (string, bool) {
	i := bytes.Index(p.environ, []byte("\x00"+key+"="))
	j := 1
	if bytes.HasPrefix(p.environ, []byte(key+"=")) {
		i, j = 0, 0
	}
	if i < 0 {
		return "", false
	}
	rest := p.environ[i+j+len(key)+1:]
	if k := bytes.IndexByte(rest, 0); k >= 0 {
		rest = rest[:k]
	}
	return string(rest), true
}

// isJobProcess reports whether p is a process of a Shoal job.
func (p procInfo) isJobProcess() bool {
	_, ok := p.envValue("SHOAL_JOB_NAME")
	return ok
}

// belongsTo reports whether p is a process of the suite under one of the
// needles: a path in its command line, or a job process working (or
// writing its outputs) under it.
func (p procInfo) belongsTo(needles []string) bool {
	for _, n := range needles {
		if n == "" {
			continue
		}
		if strings.Contains(p.cmdline, n) {
			return true
		}
		if p.isJobProcess() {
			out, _ := p.envValue("SHOAL_OUTPUTS_DIR")
			if underDir(p.cwd, n) || underDir(out, n) {
				return true
			}
		}
		// Every process an agent starts (an instance's applications and
		// shells too) carries its node's work dir.
		if dir, ok := p.envValue("SHOAL_NODE_DIR"); ok && underDir(dir, n) {
			return true
		}
	}
	return false
}

func underDir(path, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// killSuiteProcesses SIGKILLs every process (and its process group, unless
// it is this process's group) that belongs to one of the needles, until
// none is left (at most a few seconds). It returns what it found.
func killSuiteProcesses(needles []string) []string {
	var found []string
	seen := map[int]bool{}
	self := syscall.Getpgrp()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := 0
		for _, p := range allProcs() {
			if !p.belongsTo(needles) {
				continue
			}
			n++
			if !seen[p.pid] {
				seen[p.pid] = true
				found = append(found, p.String())
			}
			if p.pgid > 1 && p.pgid != self {
				_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			}
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		if n == 0 || time.Now().After(deadline) {
			return found
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentProcs returns the live agent processes of a nodes dir by node ID.
func agentProcs(nodesDir string) map[string]int {
	out := map[string]int{}
	prefix := filepath.Clean(nodesDir) + "/"
	for _, p := range allProcs() {
		args := strings.Fields(p.cmdline)
		isAgent := false
		for i, a := range args {
			if a == "agent" {
				isAgent = true
			}
			if a == "--work-dir" && i+1 < len(args) && strings.HasPrefix(args[i+1], prefix) && isAgent {
				out[strings.TrimPrefix(args[i+1], prefix)] = p.pid
			}
		}
	}
	return out
}

// jobProcs returns the live processes of a job (by SHOAL_JOB_NAME) whose
// outputs are under nodesDir.
func jobProcs(nodesDir, job string) []procInfo {
	var out []procInfo
	for _, p := range allProcs() {
		if v, ok := p.envValue("SHOAL_JOB_NAME"); ok && v == job && p.belongsTo([]string{nodesDir}) {
			out = append(out, p)
		}
	}
	return out
}

// pidAlive reports whether pid is a live (non-zombie) process of job.
func pidAlive(pid int, job string) bool {
	p, ok := readProc(pid)
	if !ok {
		return false
	}
	v, ok := p.envValue("SHOAL_JOB_NAME")
	return ok && v == job
}

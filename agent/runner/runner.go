// Package runner runs one rank of a job attempt on a node: the processes of
// that rank, their environment (including Azure ML's distribution
// variables), their log, their timeout, and their termination.
//
// Each process is "/bin/bash -c <command>" (or, for a command of plain
// words, its program started directly, see direct.go) in its own process
// group, so that
// stopping it reaches its whole tree: SIGTERM to the group, then SIGKILL
// after a grace period. When a process exits, whatever it left behind in its
// group is killed and reaped before Wait returns. To reap descendants
// orphaned by their parent's death, Start makes the calling process a child
// subreaper (prctl PR_SET_CHILD_SUBREAPER): on a node without a reaping init
// they would otherwise stay zombies. A descendant that leaves the process
// group (setsid, setpgid) escapes this supervision; confining those needs
// cgroups or containers, which are not this package's business.
package runner

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/plainfile"
)

// Reasons a run ends with.
const (
	ReasonCompleted = "completed" // every process exited 0
	ReasonFailed    = "failed"    // a process exited non-zero on its own
	ReasonTimeout   = "timeout"   // Task.Timeout elapsed and the processes were killed
	ReasonCanceled  = "canceled"  // Stop("canceled")
	ReasonPreempted = "preempted" // Stop("preempted")
)

// Distribution types, as in Azure ML's distribution.type.
const (
	DistributionNone       = ""
	DistributionPyTorch    = "pytorch"
	DistributionMPI        = "mpi"
	DistributionTensorFlow = "tensorflow"
)

// Defaults applied by Start.
const (
	DefaultKillGrace  = 10 * time.Second
	DefaultMasterPort = 29500 // torch.distributed's default
)

// Task is one rank of a job attempt.
type Task struct {
	AttemptID string
	JobName   string
	Attempt   int // attempt number (1-based)

	Rank      int // node rank, 0..NodeCount-1
	NodeCount int // number of nodes, default 1

	ProcessesPerNode int    // distribution.process_count_per_instance, default 1
	Distribution     string // "", "pytorch", "mpi", "tensorflow"
	MasterAddr       string // rank 0's address; default 127.0.0.1 on a single node
	MasterPort       int    // default 29500

	// WorkerCount and ParameterServerCount are a tensorflow job's tasks;
	// Peers every node's host:port in rank order (tfconfig.go).
	WorkerCount          int
	ParameterServerCount int
	Peers                []string

	Command string            // already expanded (${{inputs.x}} substituted)
	Dir     string            // working directory (code unpacked here); created if missing
	Env     map[string]string // job environment variables + SHOAL_* set by the agent
	LogPath string            // combined stdout+stderr of all processes, appended (0600); "" discards

	Timeout   time.Duration // 0 = none
	KillGrace time.Duration // between SIGTERM and SIGKILL, default 10 s

	// Credential is the OS account the processes run as; nil runs them as
	// the calling process's user. Dir must be that account's to enter.
	Credential *syscall.Credential

	// StartCmd starts each process in place of exec.Cmd.Start, when
	// set: the rank's network namespace starts them inside it.
	StartCmd func(*exec.Cmd) error

	// Clock stamps the run's start and end (Result.StartedAt and
	// EndedAt); the system clock when nil. The agent passes its own, the
	// one it stamps the rest of the rank's report by.
	Clock core.Clock
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the first non-zero exit code among the processes, in the
	// order they exited (0 if all exited 0); a process killed by a signal
	// counts as 128+signal, as in a shell.
	ExitCode int
	Reason   string // one of the Reason constants
	// StartedAt is Task.Clock's time just before the first process was
	// started, EndedAt its time once the last one has exited (and its
	// process group is gone): the run took at least EndedAt - StartedAt
	// by that clock, never less.
	StartedAt time.Time
	EndedAt   time.Time
}

// Run is a started rank. Its methods are safe for concurrent use.
type Run struct {
	task  Task
	procs []*exec.Cmd
	log   *os.File // nil when LogPath is empty

	mu        sync.Mutex
	reason    string // set once, by Stop, the timeout, or a failing sibling
	code      int    // first non-zero exit code
	haveCode  bool
	gone      []bool // process group i is empty: never signal it again
	exited    int
	timer     *time.Timer // timeout
	killTimer *time.Timer // SIGKILL after the grace
	finished  bool

	startedAt time.Time
	done      chan struct{}
	result    Result
}

// Start validates t, starts its processes and returns once they are all
// started, so that the caller can report the attempt running. If a process
// fails to start, those already started are killed.
func Start(t Task) (*Run, error) {
	t, err := normalize(t)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(t.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	var logf *os.File
	if t.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(t.LogPath), 0o755); err != nil {
			return nil, fmt.Errorf("runner: log: %w", err)
		}
		// Without the poller's five idle system calls (plainfile).
		logf, err = plainfile.Open(t.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("runner: log: %w", err)
		}
	}
	becomeSubreaper()

	shell := shellPath()
	base := baseEnv()
	null, err := devNull()
	if err != nil {
		if logf != nil {
			_ = logf.Close()
		}
		return nil, fmt.Errorf("runner: %w", err)
	}
	r := &Run{task: t, log: logf, done: make(chan struct{}), gone: make([]bool, t.ProcessesPerNode)}
	// Before the first process starts: stamped once Start returned, it
	// would be late by however long the fork, the exec and the caller
	// took, and a run's start to end shorter than its processes ran.
	r.startedAt = t.Clock.Now()
	start := t.StartCmd
	if start == nil {
		start = (*exec.Cmd).Start
	}
	for local := range t.ProcessesPerNode {
		env := environ(base, t, local)
		newCmd := func(path string, args, env []string) *exec.Cmd {
			cmd := &exec.Cmd{Path: path, Args: args, Dir: t.Dir, Env: env, Stdin: null,
				SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: t.Credential}}
			if logf != nil {
				cmd.Stdout, cmd.Stderr = logf, logf // the same fd, O_APPEND: writes interleave whole
			}
			return cmd
		}
		cmd := newCmd(shell, []string{shell, "-c", t.Command}, env)
		err := errors.New("not started")
		if prog, argv := directArgv(t.Command, env); prog != "" {
			// A shell would have set PWD to the working directory.
			direct := newCmd(prog, argv, append(slices.Clip(env), "PWD="+t.Dir))
			if err = start(direct); err == nil {
				cmd = direct
			}
			// Otherwise (a script without a "#!" line, a missing
			// interpreter) the shell starts it, or says why it cannot.
		}
		if err != nil {
			err = start(cmd)
		}
		if err != nil {
			for _, c := range r.procs {
				_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
				_ = c.Wait()
				cleanupGroup(c.Process.Pid)
			}
			if logf != nil {
				_ = logf.Close()
			}
			return nil, fmt.Errorf("runner: start process %d of %d: %w", local, t.ProcessesPerNode, err)
		}
		r.procs = append(r.procs, cmd)
	}
	r.mu.Lock()
	if t.Timeout > 0 {
		r.timer = time.AfterFunc(t.Timeout, func() { r.stop(ReasonTimeout) })
	}
	r.mu.Unlock()
	for i, c := range r.procs {
		go r.wait(i, c)
	}
	return r, nil
}

// Done is closed when every process has exited (Wait would return).
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until every process has exited (and what they left in their
// process groups is gone), and returns how the run ended. It may be called
// any number of times.
func (r *Run) Wait() Result {
	<-r.done
	return r.result
}

// Stop terminates the run: SIGTERM to every process group, SIGKILL after
// the task's KillGrace. Wait's Result.Reason is reason ("canceled" when
// empty), unless the run already ended or was already being stopped, in
// which case Stop does nothing. Stop does not wait.
func (r *Run) Stop(reason string) {
	if reason == "" {
		reason = ReasonCanceled
	}
	r.stop(reason)
}

// Pids returns the process ids of the rank's processes (each the leader of
// its own process group), in local rank order.
func (r *Run) Pids() []int {
	pids := make([]int, len(r.procs))
	for i, c := range r.procs {
		pids[i] = c.Process.Pid
	}
	return pids
}

func (r *Run) stop(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopLocked(reason)
}

func (r *Run) stopLocked(reason string) {
	if r.reason != "" || r.finished {
		return
	}
	r.reason = reason
	r.signalLocked(syscall.SIGTERM)
	r.killTimer = time.AfterFunc(r.task.KillGrace, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.signalLocked(syscall.SIGKILL)
	})
}

// signalLocked signals every process group that may still have members.
func (r *Run) signalLocked(sig syscall.Signal) {
	for i, c := range r.procs {
		if !r.gone[i] {
			_ = syscall.Kill(-c.Process.Pid, sig)
		}
	}
}

// wait supervises process i until it and its process group are gone.
func (r *Run) wait(i int, c *exec.Cmd) {
	_ = c.Wait() // the outcome is in c.ProcessState
	code := exitCode(c)

	r.mu.Lock()
	if code != 0 && !r.haveCode {
		r.code, r.haveCode = code, true
	}
	if code != 0 && len(r.procs) > 1 {
		// Like torchrun: one local process failing ends the others.
		r.stopLocked(ReasonFailed)
	}
	r.mu.Unlock()

	// The leader is gone; kill and reap whatever it left in its group.
	cleanupGroup(c.Process.Pid)

	r.mu.Lock()
	r.gone[i] = true
	r.exited++
	last := r.exited == len(r.procs)
	if last {
		r.finished = true
		if r.timer != nil {
			r.timer.Stop()
		}
		if r.killTimer != nil {
			r.killTimer.Stop()
		}
		reason := r.reason
		if reason == "" {
			reason = ReasonCompleted
			if r.haveCode {
				reason = ReasonFailed
			}
		}
		r.result = Result{ExitCode: r.code, Reason: reason, StartedAt: r.startedAt, EndedAt: r.task.Clock.Now()}
	}
	r.mu.Unlock()
	if last {
		if r.log != nil {
			_ = r.log.Close()
		}
		close(r.done)
	}
}

func exitCode(c *exec.Cmd) int {
	if c.ProcessState == nil {
		return -1 // Wait failed before the process was reaped: cannot happen once started
	}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return c.ProcessState.ExitCode()
}

// groupReapTimeout bounds how long cleanupGroup waits for a group to empty:
// without the subreaper, orphans are reaped by init, if at all.
const groupReapTimeout = 3 * time.Second

// cleanupGroup kills what is left in process group pgid once its leader has
// been reaped, reaps the members reparented to this process, and waits
// (boundedly) until the group is empty.
func cleanupGroup(pgid int) {
	deadline := time.Now().Add(groupReapTimeout)
	for {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
			return
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
		}
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var subreaperOnce sync.Once

// becomeSubreaper makes descendants orphaned by their parent's death
// children of this process, so that cleanupGroup can reap them.
// Best effort: without it, they are reparented to init.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

func normalize(t Task) (Task, error) {
	if strings.TrimSpace(t.Command) == "" {
		return t, errors.New("runner: empty command")
	}
	if t.Dir == "" {
		return t, errors.New("runner: no working directory")
	}
	if t.NodeCount <= 0 {
		t.NodeCount = 1
	}
	if t.ProcessesPerNode <= 0 {
		t.ProcessesPerNode = 1
	}
	if t.Rank < 0 || t.Rank >= t.NodeCount {
		return t, fmt.Errorf("runner: rank %d out of range for %d nodes", t.Rank, t.NodeCount)
	}
	t.Distribution = strings.ToLower(t.Distribution)
	switch t.Distribution {
	case DistributionNone, DistributionPyTorch, DistributionMPI, DistributionTensorFlow:
	default:
		return t, fmt.Errorf("runner: unknown distribution type %q", t.Distribution)
	}
	if t.MasterAddr == "" {
		if t.NodeCount > 1 && t.Distribution != DistributionNone {
			return t, fmt.Errorf("runner: %s job on %d nodes needs the master address", t.Distribution, t.NodeCount)
		}
		t.MasterAddr = "127.0.0.1"
	}
	if t.MasterPort <= 0 {
		t.MasterPort = DefaultMasterPort
	}
	if t.Clock == nil {
		t.Clock = core.SystemClock{}
	}
	if t.KillGrace <= 0 {
		t.KillGrace = DefaultKillGrace
	}
	if t.Timeout < 0 {
		t.Timeout = 0
	}
	for k, v := range t.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return t, fmt.Errorf("runner: invalid environment variable %q", k)
		}
	}
	return t, nil
}

// shellPath is the shell commands run with: bash when the host has it.
// Looked up once: a host's /bin/bash does not come and go while its
// agent runs, and the stat was a syscall on every job's start.
var shellPath = sync.OnceValue(func() string {
	if fi, err := os.Stat("/bin/bash"); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return "/bin/bash"
	}
	return "/bin/sh"
})

// devNull is the processes' standard input: /dev/null, read-only, opened
// once and shared (each child gets its own descriptor of it at fork).
// Left nil, os/exec opens and closes /dev/null for every process, two
// syscalls on every job's start.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// baseEnv is the part of the agent's environment a job inherits: the
// variables a shell needs, never the agent's own settings or credentials.
// Under a batch system the node's allocation is inherited too: Slurm's
// SLURM_* variables and the GPUs it gave the pilot (CUDA_VISIBLE_DEVICES).
func baseEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case k == "PATH", k == "HOME", k == "LANG", k == "TMPDIR", k == "USER", k == "SHELL",
			strings.HasPrefix(k, "LC_"), strings.HasPrefix(k, "SLURM_"), k == "CUDA_VISIBLE_DEVICES":
			env[k] = v
		}
	}
	if env["PATH"] == "" {
		env["PATH"] = defaultPath
	}
	return env
}

// environ is the environment of local process local: the safe base, the
// task's variables, then the distribution variables, later ones winning.
func environ(base map[string]string, t Task, local int) []string {
	env := maps.Clone(base)
	maps.Copy(env, t.Env)
	maps.Copy(env, distributionEnv(t, local))
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// distributionEnv returns the variables Azure ML sets for a distributed
// job's process: local rank local of node t.Rank.
func distributionEnv(t Task, local int) map[string]string {
	p := t.ProcessesPerNode
	if t.Distribution == DistributionNone && p == 1 {
		return nil
	}
	itoa := strconv.Itoa
	rank := t.Rank*p + local
	world := t.NodeCount * p
	env := map[string]string{
		"RANK":             itoa(rank),
		"LOCAL_RANK":       itoa(local),
		"WORLD_SIZE":       itoa(world),
		"LOCAL_WORLD_SIZE": itoa(p),
		"NODE_RANK":        itoa(t.Rank),
	}
	if t.Distribution == DistributionNone {
		return env
	}
	env["MASTER_ADDR"] = t.MasterAddr
	env["MASTER_PORT"] = itoa(t.MasterPort)
	if t.Distribution == DistributionMPI {
		env["OMPI_COMM_WORLD_RANK"] = itoa(rank)
		env["OMPI_COMM_WORLD_SIZE"] = itoa(world)
		env["OMPI_COMM_WORLD_LOCAL_RANK"] = itoa(local)
		env["OMPI_COMM_WORLD_LOCAL_SIZE"] = itoa(p)
		env["OMPI_COMM_WORLD_NODE_RANK"] = itoa(t.Rank)
		env["AZ_BATCH_MASTER_NODE"] = t.MasterAddr + ":" + itoa(t.MasterPort)
		env["AZ_BATCHAI_MPI_MASTER_NODE"] = t.MasterAddr
	}
	if t.Distribution == DistributionTensorFlow {
		env["TF_CONFIG"] = tfConfig(t, rank)
	}
	return env
}

// Normalize checks t and fills in its defaults as Start does (one node,
// one process, master 127.0.0.1:29500, a 10 s kill grace): for a rank
// that runs elsewhere than in this package's processes (a container).
func Normalize(t Task) (Task, error) { return normalize(t) }

// ProcessEnv is what local process local of a normalized task gets on top
// of the environment it starts from: the task's variables, then Azure
// ML's distribution variables, later ones winning. A container starts
// from its image's environment rather than this host's (baseEnv).
func ProcessEnv(t Task, local int) map[string]string {
	env := maps.Clone(t.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, distributionEnv(t, local))
	return env
}

// Environ is the environment of t's first local process (what a program
// the agent starts beside the rank, such as a job's Jupyter, runs with).
func Environ(t Task) []string { return environ(baseEnv(), t, 0) }

package apps

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/internal/procmark"
)

// treeEnv names the environment variable that marks every process of one
// run (see the package documentation).
const treeEnv = "SHOAL_PROCESS_TREE"

// killGrace is the default time between SIGTERM and SIGKILL: for a script
// that ran out of time, and for applications being stopped.
const killGrace = 5 * time.Second

// treePoll is how often a stop looks for what is left of a run; reading
// /proc costs little, but not nothing.
const treePoll = 50 * time.Millisecond

// newTree returns a run's marker value: the name, for someone reading
// /proc, and randomness, so that no other run shares it.
func newTree(name string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

// command prepares argv to run in dir as cred's account (the agent's own
// when nil), in a new process group, with env
// (the agent's environment when nil) plus the run's marker, its output
// appended to out. Passing the *os.File itself (not a pipe) means Wait
// returns when the process ends even if a background child keeps the file
// open.
func command(argv []string, dir string, env []string, tree string, out *os.File, cred *syscall.Credential) *exec.Cmd {
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	// exec keeps the last value of a repeated variable: ours win.
	cmd.Env = append(append([]string{}, env...), treeEnv+"="+tree)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	return cmd
}

// startCmd starts cmd with start (the instance's network namespace's),
// else on the agent's own network.
func startCmd(start func(*exec.Cmd) error, cmd *exec.Cmd) error {
	if start != nil {
		return start(cmd)
	}
	return cmd.Start()
}

// stopTree ends a run whose leader is pgid: SIGTERM to its process group
// and to every process carrying its marker, then, once grace has passed
// without all of them ending, SIGKILL. It returns the leader's Wait result
// (from done) after everything is gone. With pgid 0 and done nil, it ends
// what is left of a run whose leader has already gone.
func stopTree(pgid int, tree string, grace time.Duration, done <-chan error) error {
	exited := done == nil
	if exited && len(treeProcs(tree)) == 0 {
		return nil
	}
	signalTree(pgid, tree, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(treePoll)
	defer tick.Stop()
	var werr error
	for !exited || len(treeProcs(tree)) > 0 {
		select {
		case werr = <-done:
			exited = true
			continue
		case <-tick.C:
			continue
		case <-deadline.C:
		}
		break
	}
	killTree(pgid, tree)
	if !exited {
		werr = <-done
	}
	return werr
}

// killTree SIGKILLs a run's process group and every process carrying its
// marker, and waits (a little) for them to be gone.
func killTree(pgid int, tree string) {
	signalTree(pgid, tree, syscall.SIGKILL)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && len(treeProcs(tree)) > 0; {
		time.Sleep(treePoll)
	}
}

// killGroup SIGKILLs what is left of a process group.
func killGroup(pgid int) {
	if pgid > 0 { // kill(-0) would be the agent's own group
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func signalTree(pgid int, tree string, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
	for _, pid := range treeProcs(tree) {
		_ = syscall.Kill(pid, sig)
	}
}

// treeProcs lists the live processes whose environment carries the
// marker tree.
func treeProcs(tree string) []int {
	return procmark.Find(treeEnv + "=" + tree)
}

// exitText says how a process ended, for a status or a log.
func exitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with code 0"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return "exited with code " + strconv.Itoa(ee.ExitCode())
	default:
		return err.Error()
	}
}

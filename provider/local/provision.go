package local

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// errClosed is returned by Provision after Close.
var errClosed = errors.New("local provider: closed")

// Provision creates the node's work dir, NodesDir/<node-id> (mode
// 0700), which is the returned ref, and starts
//
//	<Executable> agent --server <ServerURL> --node-id <id> --work-dir <dir> [ExtraArgs...]
//
// in its own process group, with the join token in the environment
// (JoinTokenEnv) and stdout and stderr appended to <dir>/agent.log. The
// agent's pid is written to <dir>/agent.pid once it runs.
//
// With no req.Delay the process is started before Provision returns and a
// failure to start is returned. With a delay (mimicking a cloud) Provision
// returns at once and the process is started when the delay has passed,
// unless the node is released or the provider closed first; a failure then
// is logged and the node is not Alive. ctx bounds only the call: a start
// under way is not abandoned when ctx ends after Provision returned.
//
// Errors: EINVALID for a node ID that cannot name a directory, ECONFLICT
// when an agent for the node is already running, and internal errors.
func (p *Provider) Provision(ctx context.Context, req nodekind.ProvisionRequest) (_ string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if req.Node == nil {
		return "", core.Errorf(core.EINVALID, "provision: no node given")
	}
	id := req.Node.ID
	if err := checkNodeID(id); err != nil {
		return "", err
	}
	if p.cfg.DataDir == "" {
		return "", errors.New("local provider: no data dir configured")
	}
	if p.cfg.Executable == "" {
		return "", errors.New("local provider: cannot tell the path of the shoal executable")
	}
	dir := p.nodeDir(id)
	// As root, the nodes dir is one the accounts work runs as pass through
	// (0711, made so by the server); otherwise nobody else needs it.
	if err := os.MkdirAll(filepath.Dir(dir), nodesDirMode()); err != nil {
		return "", fmt.Errorf("local provider: %w", err)
	}
	if err := os.Chmod(filepath.Dir(dir), nodesDirMode()); err != nil {
		return "", fmt.Errorf("local provider: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("local provider: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("local provider: %w", err)
	}

	devices, reserved, err := p.reserveGPUs(id, req.Node.GPUs)
	if err != nil {
		return "", err
	}
	if reserved {
		defer func() {
			if err != nil {
				p.freeGPUs(id)
			}
		}()
	}
	n := &node{id: id, dir: dir, token: req.JoinToken, server: req.ServerURL, ca: req.ServerCA, gpus: devices}
	n.mu.Lock() // held through a synchronous start; n is not shared yet
	defer n.mu.Unlock()

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return "", errClosed
	}
	if old := p.nodes[dir]; old != nil && old.active() {
		p.mu.Unlock()
		return "", core.Errorf(core.ECONFLICT, "node %s is already provisioned", id)
	}
	if pid, err := readPID(dir); err == nil && isAgent(pid, id) {
		p.mu.Unlock()
		return "", core.Errorf(core.ECONFLICT, "an agent for node %s is already running (pid %d)", id, pid)
	}
	_ = os.Remove(filepath.Join(dir, PIDFile)) // stale: its process is gone
	p.nodes[dir] = n
	if req.Delay > 0 {
		n.state = statePending
		n.timer = time.AfterFunc(req.Delay, func() { p.startDelayed(n) })
		p.mu.Unlock()
		p.log.Info("node start scheduled", "node", id, "delay", req.Delay)
		return dir, nil
	}
	p.mu.Unlock()

	if err := p.start(n); err != nil {
		return "", err
	}
	return dir, nil
}

// active reports whether n is waiting to start or its process is running.
func (n *node) active() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state == statePending || n.state == stateRunning && !n.exited()
}

// startDelayed starts n once its delay has passed, unless it was released
// or cancelled meanwhile.
func (p *Provider) startDelayed(n *node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != statePending {
		return
	}
	if err := p.start(n); err != nil {
		p.log.Error("node failed to start", "node", n.id, "err", err)
	}
}

// start starts n's agent process. n.mu must be held; on return n is
// stateRunning, or stateStopped with an error.
func (p *Provider) start(n *node) (err error) {
	defer func() {
		n.token = "" // the agent has it now, or never will
		if err != nil {
			n.state = stateStopped
		}
	}()
	logf, err := os.OpenFile(filepath.Join(n.dir, LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("local provider: %w", err)
	}
	defer logf.Close() // the child has its own copy

	args := []string{"agent", "--server", n.server, "--node-id", n.id, "--work-dir", n.dir}
	args = append(args, gpuArgs(n.gpus)...)
	args = append(args, p.cfg.ExtraArgs...)
	cmd := exec.Command(p.cfg.Executable, args...)
	cmd.Dir = n.dir
	cmd.Env = agentEnv(n.token, n.ca)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: terminal signals sent to the server's group
	// do not reach the agent, and Release can signal the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local provider: start agent for node %s: %w", n.id, err)
	}
	n.pid = cmd.Process.Pid
	n.done = make(chan struct{})
	n.state = stateRunning
	go p.reap(n, cmd)

	awaitExec(n.pid)
	if err := writePID(n.dir, n.pid); err != nil {
		// Without its pid file the agent could not be adopted after a
		// restart and would run on unseen: stop it.
		_ = syscall.Kill(-n.pid, syscall.SIGKILL)
		return fmt.Errorf("local provider: node %s: %w", n.id, err)
	}
	p.log.Info("agent started", "node", n.id, "pid", n.pid, "dir", n.dir)
	return nil
}

// reap waits for n's process so that it does not linger as a zombie, and
// records how it ended.
func (p *Provider) reap(n *node, cmd *exec.Cmd) {
	err := cmd.Wait()
	n.mu.Lock()
	n.exit = err
	close(n.done)
	released := n.state == stateStopped
	n.mu.Unlock()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	if released {
		p.log.Info("agent exited", "node", n.id, "pid", cmd.Process.Pid, "status", status)
	} else {
		p.log.Warn("agent exited unexpectedly", "node", n.id, "pid", cmd.Process.Pid, "status", status)
	}
	if f, err := os.OpenFile(filepath.Join(n.dir, LogFile), os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		fmt.Fprintf(f, "shoal: agent (pid %d) ended: %s\n", cmd.Process.Pid, status)
		f.Close()
	}
}

// agentEnv is this process's environment with the join token set.
func agentEnv(token string, ca []byte) []string {
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, JoinTokenEnv+"=") && !strings.HasPrefix(kv, "SHOAL_SERVER_CA=") {
			env = append(env, kv)
		}
	}
	if len(ca) > 0 {
		env = append(env, "SHOAL_SERVER_CA="+base64.StdEncoding.EncodeToString(ca))
	}
	return append(env, JoinTokenEnv+"="+token)
}

// checkNodeID refuses IDs that would not name exactly one directory under
// NodesDir or could be read as a flag.
func checkNodeID(id string) error {
	switch {
	case id == "":
		return core.Errorf(core.EINVALID, "provision: the node has no ID")
	case len(id) > 200, id == ".", id == "..", strings.HasPrefix(id, "-"),
		strings.ContainsFunc(id, func(r rune) bool { return r == '/' || r == '\\' || r <= ' ' || r == 0x7f }):
		return core.Errorf(core.EINVALID, "provision: node ID %q cannot name a work dir", id)
	}
	return nil
}

// nodesDirMode is the mode a missing nodes dir is created with: 0711 when
// work runs as other accounts (this process is root), else 0700.
func nodesDirMode() os.FileMode {
	if os.Geteuid() == 0 {
		return 0o711
	}
	return 0o700
}

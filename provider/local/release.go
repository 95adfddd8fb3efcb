package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// Release stops the node's agent: SIGTERM to its process group, then, if
// the agent has not exited within StopGrace (or ctx ends first), SIGKILL to
// the group. A node still in its provisioning delay is simply not started.
// Agents started by an earlier Provider over the same DataDir (adopted after
// a server restart) are found through their pid file and recognised by
// their command line before they are signalled. A cluster node's work
// dir and its agent.log are kept for Config.NodeDirRetention, then
// removed (at a later release, or when a provider starts); an
// instance's is its home, kept until Purge.
//
// Release is idempotent: a node that is unknown, never started or already
// gone returns nil. A node without a reference (its provisioning was
// never recorded) is released by the reference its ID gives.
func (p *Provider) Release(ctx context.Context, nd *nodekind.Node) error {
	if nd == nil {
		return nil
	}
	ref := nd.ProviderRef
	if ref == "" {
		// The server may have started the agent and then failed to record
		// its reference (a store error): the node must not keep running.
		// A local node's reference is its work dir, which its ID names.
		ref = p.nodeDir(nd.ID)
		if p.lookup(ref) == nil {
			if _, err := os.Stat(filepath.Join(ref, PIDFile)); err != nil {
				return nil // never started here: nothing of it to stop
			}
		}
	}
	defer func() {
		if n := killNodeProcesses(nd.ID, p.nodeDir(nd.ID)); n > 0 {
			p.log.Info("killed processes left by the node's jobs", "node", nd.ID, "processes", n)
		}
		p.freeGPUs(nd.ID)
		p.markReleased(nd, time.Now())
	}()
	if n := p.lookup(ref); n != nil {
		n.mu.Lock()
		switch n.state {
		case statePending:
			n.cancel()
			n.mu.Unlock()
			p.log.Info("node released before it started", "node", n.id)
			return nil
		case stateStopped:
			// Released already (perhaps by a Release still waiting).
			done := n.done
			n.mu.Unlock()
			if done != nil {
				select {
				case <-done:
				case <-ctx.Done():
				}
			}
			return nil
		}
		n.state = stateStopped
		pid, done := n.pid, n.done
		n.mu.Unlock()
		select {
		case <-done:
			// It exited on its own; its group id may be gone too.
			removePID(ref, pid)
			return nil
		default:
		}
		wait := func(ctx context.Context, d time.Duration) bool {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-done:
				return true
			case <-t.C:
				return false
			case <-ctx.Done():
				return false
			}
		}
		return p.stop(ctx, ref, n.id, pid, wait)
	}

	// Not started by this instance: maybe adopted.
	if !filepath.IsAbs(ref) {
		return nil
	}
	pid, err := readPID(ref)
	if err != nil {
		return nil // never started, or released already
	}
	if !isAgent(pid, nd.ID) {
		removePID(ref, pid) // stale: the pid is gone or belongs to another process
		return nil
	}
	wait := func(ctx context.Context, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			if !isAgent(pid, nd.ID) {
				return true
			}
			if !time.Now().Before(deadline) {
				return false
			}
			select {
			case <-time.After(pollInterval):
			case <-ctx.Done():
				return false
			}
		}
	}
	return p.stop(ctx, ref, nd.ID, pid, wait)
}

// stop terminates the agent pid and its process group. wait(ctx, d) reports
// whether the agent exited within d.
func (p *Provider) stop(ctx context.Context, ref, id string, pid int, wait func(context.Context, time.Duration) bool) error {
	// The agent leads its own group; signal the group so that what it
	// started in that group stops too.
	target := -pid
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid != pid {
		target = pid
	}
	if err := syscall.Kill(target, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("local provider: stop node %s (pid %d): %w", id, pid, err)
	}
	graceful := wait(ctx, p.cfg.StopGrace)
	// Kill what is left of the group, or the agent itself if it ignored
	// SIGTERM.
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("local provider: kill node %s (pid %d): %w", id, pid, err)
	}
	if graceful {
		p.log.Info("agent stopped", "node", id, "pid", pid)
	} else {
		p.log.Warn("agent killed: it did not stop within its grace period", "node", id, "pid", pid, "grace", p.cfg.StopGrace)
		if !wait(context.WithoutCancel(ctx), killWait) {
			p.log.Warn("agent still present after SIGKILL", "node", id, "pid", pid)
		}
	}
	removePID(ref, pid)
	return nil
}

// Alive reports whether the node's agent is running, or is still waiting
// for its provisioning delay. For agents this Provider did not start (a
// server restart), it reads the pid file in the ref and checks that the
// process exists and that its command line is `... agent ... --node-id
// <id> ...`, so that a recycled pid is not taken for the agent. An unknown
// node is not alive (false, nil).
func (p *Provider) Alive(ctx context.Context, nd *nodekind.Node) (bool, error) {
	if nd == nil || nd.ProviderRef == "" {
		return false, nil
	}
	ref := nd.ProviderRef
	if n := p.lookup(ref); n != nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.id != nd.ID {
			return false, nil
		}
		switch n.state {
		case statePending:
			return true, nil
		case stateRunning:
			return !n.exited(), nil
		}
		return false, nil
	}
	if !filepath.IsAbs(ref) {
		return false, nil
	}
	pid, err := readPID(ref)
	if err != nil {
		if errors.Is(err, errNoPID) {
			return false, nil
		}
		return false, fmt.Errorf("local provider: node %s: %w", nd.ID, err)
	}
	// EPERM: it exists but is not ours to signal; the command line decides.
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false, nil
	}
	if !isAgent(pid, nd.ID) {
		return false, nil
	}
	// A server that restarted learns which devices the agent holds.
	p.adoptGPUs(nd.ID, pid)
	return true, nil
}

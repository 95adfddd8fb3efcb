package rank

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/internal/netns"
)

// ownNetwork puts a single-node rank's host processes in a network
// namespace of their own, when the node makes them (Node.Networks):
// the host's loopback, and whatever another user's work listens on
// there, is out of reach. The rank finds on its own loopback what a job
// finds on the host's (the identity endpoint, the server when the agent
// reaches it there: loopback.go), and the outside through slirp4netns,
// which starts beside the processes rather than before them (a job's
// start does not wait for it). The namespace is its account's on this
// node (Networks). A multi-node rank keeps the host's network: its
// ranks reach each other at their hosts' addresses.
//
// Starting the namespace is the node's part: an error here loses the
// rank (it runs again), never fails the job.
func (r *Rank) ownNetwork(task *runner.Task, logPath string) error {
	if r.n.Networks == nil || r.t.NodeCount > 1 || r.account == nil {
		return nil
	}
	ns := r.netNS
	if ns == nil {
		var release func()
		var err error
		if ns, release, err = r.n.Networks.Acquire(r.account.UID); err != nil {
			return fmt.Errorf("the job's network namespace: %w", err)
		}
		r.ns, r.netNS = release, ns
	}
	if r.msi != nil {
		// The rank's own endpoint, on the port it has on the host.
		if err := r.serveLoopback(ns.Listen, false); err != nil {
			return fmt.Errorf("the job's network namespace: %w", err)
		}
	}
	if r.n.Networks.Slirp == "" {
		r.appendLog(logPath, "shoal agent: this node has no slirp4netns: the job's network namespace reaches its identity endpoint and the server when the agent reaches it on the loopback, nothing else\n")
	}
	task.StartCmd = ns.Start
	return nil
}

// closeNetwork releases the rank's namespace; a second call does
// nothing.
func (r *Rank) closeNetwork() {
	if r.ns != nil {
		r.ns()
		r.ns = nil
	}
	r.netNS = nil
}

// jobNetwork is the namespace of the rank's account that its host
// processes will run in, acquired now so that its inputs are fetched
// (and its outputs uploaded) through it: the job's own network, never
// the agent's. nil when the rank has none (on several nodes, whose
// ranks keep the host's network, or on a node that makes no
// namespaces).
func (r *Rank) jobNetwork() (*netns.NS, error) {
	if r.netNS != nil {
		return r.netNS, nil
	}
	if r.n.Networks == nil || r.t.NodeCount > 1 || r.account == nil {
		return nil, nil
	}
	// A rank in a container has a namespace of the engine's, made only
	// when the container starts, after its inputs are fetched: they are
	// fetched through its account's namespace instead, which reaches
	// what the container does (the outside, never the host's loopback).
	ns, release, err := r.n.Networks.Acquire(r.account.UID)
	if err != nil {
		return nil, fmt.Errorf("the job's network namespace: %w", err)
	}
	r.ns, r.netNS = release, ns
	return ns, nil
}

// nsDialer dials from inside ns. Its way out (slirp4netns) comes up
// beside the namespace, not before it: a dial while the way out is
// not up yet ("network is unreachable") is tried again, up to
// slirpUpTries times (about 5 s of waits), before it counts. Bounded by
// tries, not by reading the clock: a timer paces, nothing decides on
// the time.
func nsDialer(ns *netns.NS, slirp bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		wait := 10 * time.Millisecond
		for try := 1; ; try++ {
			c, err := ns.Dial(ctx, network, addr)
			if err == nil || !slirp || !errors.Is(err, syscall.ENETUNREACH) || try >= slirpUpTries {
				if err != nil && !slirp {
					err = fmt.Errorf("%w (the job's network namespace has no way out on this node: it has no slirp4netns)", err)
				}
				return c, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			wait = min(wait*2, 200*time.Millisecond)
		}
	}
}

// slirpUpTries bounds how often a fetch tries its namespace's way out
// before it is up (it takes milliseconds): waits of 10 ms doubling to
// 200 ms, about 5 s in all.
const slirpUpTries = 30

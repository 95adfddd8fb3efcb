package rank

import (
	"fmt"

	"github.com/shoal-ml/shoal/agent/runner"
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
	ns, release, err := r.n.Networks.Acquire(r.account.UID)
	if err != nil {
		return fmt.Errorf("the job's network namespace: %w", err)
	}
	r.ns = release
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

// closeNetwork releases the rank's namespace.
func (r *Rank) closeNetwork() {
	if r.ns != nil {
		r.ns()
		r.ns = nil
	}
}

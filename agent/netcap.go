package agent

import (
	"os/exec"

	"github.com/shoal-ml/shoal/agent/rank"
	"github.com/shoal-ml/shoal/internal/netns"
)

// netCaps is what the node can do for its work's network: give a
// single-node job or an instance a network namespace of its own (own),
// and a way out of it (slirp, slirp4netns's path).
type netCaps struct {
	own   bool
	slirp string
	// ranks are the namespaces of the node's ranks, when own.
	ranks *rank.Networks
}

// probeNetwork finds out, once at the agent's start, whether it can make
// network namespaces: only an agent that runs work as accounts of their
// own (it runs as root) and is not itself a container of an image (a
// kubernetes node's pod, which has a network of its own already) tries.
// It says what it found in its log, and work says so in its own log
// when it has no way out.
func (a *Agent) probeNetwork() netCaps {
	if !a.accounts.Isolated() || a.cfg.NodeImage != "" {
		a.log.Info("work shares the host's network: this agent does not run as root (or runs in a pod)")
		return netCaps{}
	}
	ns, err := netns.New()
	if err != nil {
		a.log.Warn("work shares the host's network: this agent cannot make network namespaces", "err", err)
		return netCaps{}
	}
	_ = ns.Close()
	c := netCaps{own: true}
	if p, err := exec.LookPath("slirp4netns"); err == nil {
		c.slirp = p
		a.log.Info("single-node jobs and instances get a network namespace of their own, out through slirp4netns", "slirp4netns", p)
	} else {
		a.log.Warn("single-node jobs and instances get a network namespace of their own, and no way out but to the server: this host has no slirp4netns (apt-get install slirp4netns)")
	}
	c.ranks = rank.NewNetworks(c.slirp, a.cfg.ServerURL)
	return c
}

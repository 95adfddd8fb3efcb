package sshpool

import (
	"fmt"
	"sort"
	"strings"
)

// WorkIsolation says as whom the nodes' work runs: the agent runs as each
// host's SSH login and, only where that login is root, runs work as an
// OS account of its own per user.
func (p *Provider) WorkIsolation() string {
	var shared []string
	for _, h := range p.cfg.Hosts {
		if h.User != "root" {
			shared = append(shared, fmt.Sprintf("%s@%s", h.User, h.Address))
		}
	}
	if len(shared) == 0 {
		return "work runs as an OS account of its own per user on every host (the agents log in as root)"
	}
	sort.Strings(shared)
	return fmt.Sprintf("on %s work runs as that login and can read what it can read: log in as root, or use containers, before sharing these hosts", strings.Join(shared, ", "))
}

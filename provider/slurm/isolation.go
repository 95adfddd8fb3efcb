package slurm

import (
	"fmt"
	"os"
	"os/user"
)

// WorkIsolation says as whom the nodes' work runs: the pilot jobs are
// submitted as this server's user, whom Slurm runs them as; the agent in a
// pilot runs work as an account of its own per user only when that user
// is root.
func (p *Provider) WorkIsolation() string {
	if os.Geteuid() == 0 {
		return "work runs as an OS account of its own per user on the compute nodes (the pilot jobs run as root)"
	}
	name := fmt.Sprint(os.Geteuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return fmt.Sprintf("work runs as %s, who submits the pilot jobs, and can read what %s can read on the compute nodes: run the server as root, or use containers, before sharing this partition", name, name)
}

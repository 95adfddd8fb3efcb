package rank

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
)

// startSSH serves a job's ssh service: the agent's own SSH server (the
// one instances and cluster nodes serve), on the node's address, letting
// in the service's public keys alone as azureuser, with sessions that
// run as the job's account, in its folder and environment, in its network
// namespace or container. The application proxy never reaches it: users
// connect with their OpenSSH client (shoal job connect-ssh).
func (s *rankServices) startSSH(st node.ServiceTask, in *interactive.ServiceInstance, task runner.Task, crun *ctrhost.Run) error {
	keys, err := sshd.ParseAuthorizedKeys(strings.Split(strings.TrimSpace(st.SSHPublicKeys), "\n"))
	if err != nil || len(keys) == 0 {
		return fmt.Errorf("the ssh service's ssh_public_keys cannot be read: %v", err)
	}
	r := s.r
	env := runner.Environ(task)
	cfg := sshd.Config{
		Listen:      net.JoinHostPort(listenAddress(r.n.Address), "0"),
		HostKeyPath: filepath.Join(filepath.Dir(task.LogPath), "ssh_host_ed25519_key_"+st.Name),
		Username:    compute.InstanceAdminUsername,
		AuthorizedKeys: func() []ssh.PublicKey {
			return keys
		},
		HomeDir: task.Dir, Credential: task.Credential,
		Env:    func() []string { return env },
		Logger: r.n.Log.With("component", "sshd", "job", r.t.JobName, "service", st.Name),
		OnLogin: func(l sshd.Login) {
			r.n.Log.Info("ssh login to a job", "job", r.t.JobName, "user", l.User, "remote", l.Remote, "key", l.KeyFingerprint, "accepted", l.Accepted, "err", l.Err)
		},
	}
	if r.n.Clock != nil {
		cfg.Now = r.n.Clock.Now
	}
	if task.Credential != nil {
		cfg.SFTPCommand, cfg.SFTPUnavailable = files.SFTPCommand(r.n.RunDir)
	}
	if r.netNS != nil {
		cfg.Network = r.netNS
	}
	if crun != nil {
		rt, _, err := r.n.Ctr.Runtime(s.ctx)
		if err != nil {
			return fmt.Errorf("the job's container engine: %v", err)
		}
		ex, ok := rt.(container.Execer)
		if !ok || len(crun.IDs()) == 0 {
			return fmt.Errorf("this node's container engine cannot run a session in the job's container")
		}
		cfg.Container = &sshd.ContainerTarget{Runtime: ex, ID: crun.IDs()[0],
			User: fmt.Sprintf("%d:%d", r.account.UID, r.account.GID), Home: task.Dir}
	}
	srv, err := sshd.Start(cfg)
	if err != nil {
		return fmt.Errorf("starting the job's SSH server: %v", err)
	}
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	in.Addr, in.Port, in.HostKey, in.Status = srv.Addr().String(), srv.Addr().Port, srv.HostKey(), interactive.ServiceStatusRunning
	// The server is the agent's, not the job's: nothing to check at
	// dial, since the proxy never dials it.
	in.ListenerOwner = core.ListenerOwner{}
	return nil
}

// listenAddress is where the node's services for users listen: its
// address, the loopback when it has none.
func listenAddress(a string) string {
	if a == "" {
		return "127.0.0.1"
	}
	return a
}

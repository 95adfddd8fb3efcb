package agent

import (
	"crypto/subtle"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// Files in a cluster node's work dir for its SSH server: the host key and
// the port, kept so that a restarted agent serves the same identity on
// the same port.
const (
	nodeHostKeyFile = "ssh_host_ed25519_key"
	nodeSSHPortFile = "ssh_port"
)

// nodeSSHState is a cluster node's SSH server (a cluster with
// ssh_public_access_enabled), started once the server sends its settings.
type nodeSSHState struct {
	mu  sync.Mutex
	srv *sshd.Server
	// retry is the settings of a server that failed to start: the
	// server sends them only once, so the agent tries again on later
	// syncs.
	retry *node.NodeSSH
}

// retrySSH returns the settings of an SSH server still to be started.
func (a *Agent) retrySSH() *node.NodeSSH {
	a.nodeSSH.mu.Lock()
	defer a.nodeSSH.mu.Unlock()
	return a.nodeSSH.retry
}

// sshPort is where the node's SSH server listens, 0 when it serves none.
func (a *Agent) sshPort() int {
	a.nodeSSH.mu.Lock()
	defer a.nodeSSH.mu.Unlock()
	if a.nodeSSH.srv == nil {
		return 0
	}
	return a.nodeSSH.srv.Addr().Port
}

// serveNodeSSH starts the node's SSH server for the cluster's admin
// account: the login is the admin username, with the cluster's public key
// or its password. Sessions start in the node's work dir (the jobs'
// folders are there) with the job environment's Shoal and SDK variables.
func (a *Agent) serveNodeSSH(cfg *node.NodeSSH) {
	a.nodeSSH.mu.Lock()
	defer a.nodeSSH.mu.Unlock()
	if a.nodeSSH.srv != nil {
		return
	}
	var keys []ssh.PublicKey
	for _, k := range cfg.AuthorizedKeys {
		parsed, err := sshd.ParseAuthorizedKeys([]string{k})
		if err != nil {
			a.log.Warn("the cluster's SSH key cannot be read; it is not authorized", "err", err)
			continue
		}
		keys = append(keys, parsed...)
	}
	env := procmark.Node(a.cfg.NodeID, a.cfg.WorkDir)
	for k, v := range a.sdkEnv() {
		env = append(env, k+"="+v)
	}
	// Logins run as the cluster's own account (compute:<ws>/<name>), in
	// its home on the node: an admin password shared with a team must not
	// open the server's files, nor the folders of any user's jobs.
	home := a.cfg.WorkDir
	var cred *syscall.Credential
	if a.accounts != nil && a.accounts.Isolated() {
		principal := cfg.RunAs
		if principal == "" {
			principal = "node:" + a.cfg.NodeID
		}
		acct, err := a.accounts.For(principal)
		if err == nil {
			home, err = files.HomeFor(a.runDir, acct)
		}
		if err != nil {
			a.log.Error("the cluster's SSH account cannot be set up; the node serves no SSH", "err", err)
			return
		}
		cred = acct.Apply(nil).Credential
		env = append(env, acct.Env()...)
	}
	var sftpCmd []string
	var sftpWhy string
	if cred != nil {
		sftpCmd, sftpWhy = files.SFTPCommand(a.runDir)
	}
	sc := sshd.Config{
		HostKeyPath: filepath.Join(a.cfg.WorkDir, nodeHostKeyFile), Username: cfg.AdminUsername,
		Credential: cred, SFTPCommand: sftpCmd, SFTPUnavailable: sftpWhy,
		AuthorizedKeys: func() []ssh.PublicKey { return keys }, HomeDir: home,
		Env: func() []string { return env }, Logger: a.log.With("component", "sshd"), Now: a.now,
		OnLogin: func(l sshd.Login) {
			a.log.Info("ssh login", "user", l.User, "remote", l.Remote, "key", l.KeyFingerprint, "accepted", l.Accepted, "err", l.Err)
		},
	}
	if cfg.PasswordSHA256 != "" {
		want, err := hex.DecodeString(cfg.PasswordSHA256)
		if err == nil {
			salt := cfg.PasswordSalt
			sc.CheckPassword = func(pw []byte) bool {
				got, _ := hex.DecodeString(compute.NodePasswordHash(salt, string(pw)))
				return subtle.ConstantTimeCompare(got, want) == 1
			}
		}
	}
	portPath := filepath.Join(a.cfg.WorkDir, nodeSSHPortFile)
	var srv *sshd.Server
	var err error
	if port := files.ReadPort(portPath); port > 0 {
		sc.Listen = net.JoinHostPort(a.cfg.Address, strconv.Itoa(port))
		srv, err = sshd.Start(sc)
	}
	if srv == nil {
		sc.Listen = net.JoinHostPort(a.cfg.Address, "0")
		if srv, err = sshd.Start(sc); err != nil {
			if a.nodeSSH.retry == nil {
				a.log.Error("the node's SSH server did not start; trying again on later syncs", "err", err)
			}
			a.nodeSSH.retry = cfg
			return
		}
	}
	a.nodeSSH.retry = nil
	_ = os.WriteFile(portPath, []byte(strconv.Itoa(srv.Addr().Port)), 0o600)
	a.nodeSSH.srv = srv
	a.log.Info("serving SSH", "port", srv.Addr().Port, "user", cfg.AdminUsername)
}

// closeNodeSSH stops the node's SSH server, if any.
func (a *Agent) closeNodeSSH() {
	a.nodeSSH.mu.Lock()
	srv := a.nodeSSH.srv
	a.nodeSSH.srv = nil
	a.nodeSSH.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

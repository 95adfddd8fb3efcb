// Package sshpool is the `ssh` provider: a location's nodes are `shoal
// agent` processes on a static pool of hosts the team owns, reached over
// SSH. Provision picks a host with room for the node's size (filling one
// host before the next), copies the shoal binary there when the host
// lacks this version (its checksum names it), and starts the agent
// detached with its join token sent on standard input, never on a command
// line; Release stops the agent's process group and removes its work dir.
// Host keys are checked against a known_hosts file: an unknown or changed
// key is refused. Logs and outputs travel over the agent's HTTP
// connection to the server, as on any provider: nothing assumes a shared
// filesystem.
package sshpool

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host is a machine of the pool.
type Host struct {
	Address      string
	Port         int // default 22
	User         string
	IdentityFile string
	VCPUs        int
	MemoryGB     float64
	GPUs         int
	// DetectGPUs (gpus: auto) asks the host's nvidia-smi how many GPUs it
	// has, the first time they matter; GPUs is then ignored.
	DetectGPUs bool
	// GPUModel names the host's GPUs; with DetectGPUs, nvidia-smi's name
	// is used when this is empty.
	GPUModel string
	// Labels are the operator's notes on the host, shown by `location show`.
	Labels map[string]string
	// RemoteDir holds the binary and the nodes' work dirs on the host;
	// default ".shoal" in the login's home.
	RemoteDir string
	// PowerOnCommand and PowerOffCommand, when set, run on the server
	// (sh -c) to power the host on before its first node and off after
	// its last (wake-on-LAN, IPMI), as Slurm's power saving does.
	PowerOnCommand, PowerOffCommand string
}

// Config configures a Provider.
type Config struct {
	Hosts []Host
	// KnownHostsFile lists the hosts' keys (OpenSSH known_hosts format).
	KnownHostsFile string
	// Executable is the shoal binary copied to the hosts; default this
	// process's.
	Executable string
	Logger     *slog.Logger
	// DialTimeout bounds connecting to a host; default 10 s.
	DialTimeout time.Duration
}

// Provider is the ssh provider of one location.
type Provider struct {
	cfg      Config
	hostKeys ssh.HostKeyCallback
	sum      string // the executable's SHA-256, hex
	log      *slog.Logger

	mu     sync.Mutex
	placed map[string]placement // node ID → where it runs
	// gpus are the GPUs found on hosts with DetectGPUs, by host index.
	gpus map[int]detected
}

type placement struct {
	host  int
	vcpus int
	gpus  []int // device indices on the host
}

var (
	_ node.Provider      = (*Provider)(nil)
	_ catalog.HostLister = (*Provider)(nil)
)

// New checks cfg and returns a provider. The known_hosts file must exist:
// hosts are never trusted on first use.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("ssh provider: no hosts")
	}
	if cfg.KnownHostsFile == "" {
		return nil, errors.New("ssh provider: known_hosts is required (the hosts' keys are checked, never trusted on first use)")
	}
	hk, err := knownhosts.New(cfg.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("ssh provider: known_hosts: %w", err)
	}
	for i := range cfg.Hosts {
		h := &cfg.Hosts[i]
		if h.Port == 0 {
			h.Port = 22
		}
		if h.RemoteDir == "" {
			h.RemoteDir = ".shoal"
		}
		if h.Address == "" || h.User == "" || h.IdentityFile == "" || h.VCPUs <= 0 {
			return nil, fmt.Errorf("ssh provider: hosts[%d]: address, user, identity_file and vcpus are required", i)
		}
	}
	if cfg.Executable == "" {
		if cfg.Executable, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	sum, err := fileSum(cfg.Executable)
	if err != nil {
		return nil, fmt.Errorf("ssh provider: %w", err)
	}
	return &Provider{cfg: cfg, hostKeys: hk, sum: sum, log: cfg.Logger.With("provider", "ssh"), placed: map[string]placement{}, gpus: map[int]detected{}}, nil
}

func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Name returns "ssh".
func (p *Provider) Name() string { return "ssh" }

// dial connects to host i, checking its key against known_hosts.
func (p *Provider) dial(ctx context.Context, i int) (*ssh.Client, error) {
	h := p.cfg.Hosts[i]
	key, err := os.ReadFile(h.IdentityFile)
	if err != nil {
		return nil, core.Errorf(core.EINVALID, "host %s: identity file: %v", h.Address, err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		return nil, core.Errorf(core.EINVALID, "host %s: identity file %s: %v", h.Address, h.IdentityFile, err)
	}
	addr := net.JoinHostPort(h.Address, strconv.Itoa(h.Port))
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "host %s unreachable: %v", addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(p.cfg.DialTimeout))
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User: h.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: p.hostKeys, Timeout: p.cfg.DialTimeout,
	})
	if err != nil {
		conn.Close()
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			if len(ke.Want) > 0 {
				return nil, core.Errorf(core.EFORBIDDEN, "host %s: its host key does not match known_hosts (%s): refused", addr, p.cfg.KnownHostsFile)
			}
			return nil, core.Errorf(core.EFORBIDDEN, "host %s: no host key for it in known_hosts (%s): refused", addr, p.cfg.KnownHostsFile)
		}
		return nil, core.Errorf(core.EUNAVAILABLE, "host %s: %v", addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// run runs a shell command on the host, with stdin, and returns its
// combined output.
func run(c *ssh.Client, cmd, stdin string) (string, error) {
	s, err := c.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	s.Stdin = strings.NewReader(stdin)
	out, err := s.CombinedOutput(cmd)
	return strings.TrimSpace(string(out)), err
}

// quote quotes s for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// nodeDir is node id's work dir on host h (relative paths are in the
// login's home).
func nodeDir(h Host, id string) string { return path.Join(h.RemoteDir, "nodes", id) }

// pick chooses the host for a node of vcpus and gpus: the fullest host
// that still has room, so that hosts fill one after another and whole
// hosts stay free for large sizes. The choice, with the GPU devices the
// node gets, is reserved.
func (p *Provider) pick(id string, vcpus, gpus int) (int, []int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	used := make([]int, len(p.cfg.Hosts))
	taken := make([]map[int]bool, len(p.cfg.Hosts))
	for _, pl := range p.placed {
		used[pl.host] += pl.vcpus
		if taken[pl.host] == nil {
			taken[pl.host] = map[int]bool{}
		}
		for _, g := range pl.gpus {
			taken[pl.host][g] = true
		}
	}
	best := -1
	for i, h := range p.cfg.Hosts {
		if used[i]+vcpus > h.VCPUs || p.gpuCountLocked(i)-len(taken[i]) < gpus {
			continue
		}
		if best < 0 || used[i] > used[best] {
			best = i
		}
	}
	if best < 0 {
		return 0, nil, core.Errorf(core.EQUOTA, "out of capacity: no host of the pool has %d free vCPUs and %d free GPUs", vcpus, gpus)
	}
	var devices []int
	for g := 0; g < p.gpuCountLocked(best) && len(devices) < gpus; g++ {
		if !taken[best][g] {
			devices = append(devices, g)
		}
	}
	p.placed[id] = placement{host: best, vcpus: vcpus, gpus: devices}
	return best, devices, nil
}

func (p *Provider) unplace(id string) {
	p.mu.Lock()
	delete(p.placed, id)
	p.mu.Unlock()
}

// ref is a node's provider ref: the host's index and address, and the
// node's ID ("1@gpu2.lab/cpu-cluster-n4").
func ref(i int, h Host, id string) string { return fmt.Sprintf("%d@%s/%s", i, h.Address, id) }

// hostOf reads a ref back: the host's index.
func (p *Provider) hostOf(ref string) (int, error) {
	hostPart, _, _ := strings.Cut(ref, "/")
	i, addr, ok := strings.Cut(hostPart, "@")
	n, err := strconv.Atoi(i)
	if !ok || err != nil || n < 0 || n >= len(p.cfg.Hosts) || p.cfg.Hosts[n].Address != addr {
		return 0, fmt.Errorf("ssh provider: %q names no host of the pool", ref)
	}
	return n, nil
}

// Provision starts a node's agent on a host of the pool (see the package
// doc). Errors: EQUOTA when no host has room; an error naming the host
// when it cannot be reached or its key is not the known one.
func (p *Provider) Provision(ctx context.Context, req node.ProvisionRequest) (string, error) {
	n := req.Node
	t0 := time.Now()
	if n.GPUs > 0 {
		p.detectGPUs(ctx)
	}
	i, devices, err := p.pick(n.ID, max(n.VCPUs, 1), n.GPUs)
	if err != nil {
		return "", err
	}
	gpuArg := ""
	if len(devices) > 0 {
		list := make([]string, len(devices))
		for k, d := range devices {
			list[k] = strconv.Itoa(d)
		}
		gpuArg = " --gpus " + strings.Join(list, ",")
	}
	h := p.cfg.Hosts[i]
	fail := func(err error) (string, error) {
		p.unplace(n.ID)
		return "", err
	}
	if err := p.powerOn(ctx, i); err != nil {
		return fail(err)
	}
	c, err := p.dial(ctx, i)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	dialed := time.Since(t0)
	bin, err := p.ensureBinary(c, h)
	if err != nil {
		return fail(core.Errorf(core.EUNAVAILABLE, "host %s: copying the shoal binary: %v", h.Address, err))
	}
	dir := nodeDir(h, n.ID)
	// Standard input: the join token, then the server's CA (base64, or
	// an empty line): neither goes on a command line.
	cmd := fmt.Sprintf(`set -e; d=%s; mkdir -p "$d"; chmod 700 "$d"; read -r T; read -r C || true; cd "$d"; `+
		`SHOAL_JOIN_TOKEN="$T" SHOAL_SERVER_CA="$C" setsid %s agent --server %s --node-id %s --work-dir "$PWD" --address %s%s >>agent.log 2>&1 </dev/null & echo $! > agent.pid`,
		quote(dir), quote(bin), quote(req.ServerURL), quote(n.ID), quote(h.Address), gpuArg)
	copied := time.Since(t0)
	if out, err := run(c, cmd, req.JoinToken+"\n"+base64.StdEncoding.EncodeToString(req.ServerCA)+"\n"); err != nil {
		return fail(core.Errorf(core.EUNAVAILABLE, "host %s: starting the agent: %v: %s", h.Address, err, out))
	}
	p.log.Info("agent started", "node", n.ID, "host", h.Address, "took", time.Since(t0), "dial", dialed, "binary", copied-dialed)
	return ref(i, h, n.ID), nil
}

// ensureBinary copies this shoal binary to the host unless the host has
// it (the file is named by its checksum, so a stale one is never used).
func (p *Provider) ensureBinary(c *ssh.Client, h Host) (string, error) {
	bin := path.Join(h.RemoteDir, "bin", "shoal-"+p.sum[:16])
	if _, err := run(c, fmt.Sprintf("test -x %s", quote(bin)), ""); err == nil {
		return bin, nil
	}
	if out, err := run(c, fmt.Sprintf("mkdir -p %s", quote(path.Dir(bin))), ""); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	sc, err := sftp.NewClient(c)
	if err != nil {
		return "", err
	}
	defer sc.Close()
	src, err := os.Open(p.cfg.Executable)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp := bin + ".tmp"
	dst, err := sc.Create(tmp)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", err
	}
	if err := dst.Close(); err != nil {
		return "", err
	}
	if err := sc.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := sc.PosixRename(tmp, bin); err != nil {
		return "", err
	}
	p.log.Info("shoal binary copied", "host", h.Address, "path", bin)
	return bin, nil
}

// Release stops the node's agent (its whole process group: SIGTERM, then
// SIGKILL after 5 s) and removes its work dir. A host that cannot be
// reached is an error: the server retries.
func (p *Provider) Release(ctx context.Context, n *node.Node) error {
	if n == nil || n.ProviderRef == "" {
		return nil
	}
	i, err := p.hostOf(n.ProviderRef)
	if err != nil {
		return nil // not a node of this pool: nothing of it to stop
	}
	c, err := p.dial(ctx, i)
	if err != nil {
		return err
	}
	defer c.Close()
	cmd := fmt.Sprintf(`d=%s; if [ -f "$d/agent.pid" ]; then p=$(cat "$d/agent.pid"); kill -TERM -"$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; `+
		`i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -"$p" 2>/dev/null; fi; rm -rf "$d"`, quote(nodeDir(p.cfg.Hosts[i], n.ID)))
	if out, err := run(c, cmd, ""); err != nil {
		return fmt.Errorf("host %s: stopping node %s: %v: %s", p.cfg.Hosts[i].Address, n.ID, err, out)
	}
	p.unplace(n.ID)
	c.Close()
	return p.powerOffIfIdle(ctx, i)
}

// Alive reports whether the node's agent still runs on its host; a host
// that cannot be reached is an error (it may be slow rather than gone:
// the node's lease decides).
func (p *Provider) Alive(ctx context.Context, n *node.Node) (bool, error) {
	if n == nil || n.ProviderRef == "" {
		return false, nil
	}
	i, err := p.hostOf(n.ProviderRef)
	if err != nil {
		return false, nil // not a node of this pool
	}
	c, err := p.dial(ctx, i)
	if err != nil {
		return false, err
	}
	defer c.Close()
	_, err = run(c, fmt.Sprintf(`kill -0 "$(cat %s/agent.pid 2>/dev/null)" 2>/dev/null`, quote(nodeDir(p.cfg.Hosts[i], n.ID))), "")
	alive := err == nil
	if alive {
		// A server that restarted learns where its nodes run.
		p.mu.Lock()
		// (Its GPU devices are not known again: a node adopted after a
		// restart holds its vCPUs; its devices are free for the next.)
		p.placed[n.ID] = placement{host: i, vcpus: max(n.VCPUs, 1)}
		p.mu.Unlock()
	}
	return alive, nil
}

// Hosts returns the pool with each host's capacity, unusable when it
// does not answer.
func (p *Provider) Hosts(ctx context.Context) ([]*catalog.Host, error) {
	p.detectGPUs(ctx)
	out := make([]*catalog.Host, 0, len(p.cfg.Hosts))
	for i, h := range p.cfg.Hosts {
		p.mu.Lock()
		gpus, model := p.gpuCountLocked(i), h.GPUModel
		if d, ok := p.gpus[i]; ok && model == "" {
			model = d.model
		}
		p.mu.Unlock()
		host := &catalog.Host{Name: h.Address, Address: h.Address, Kind: "provider", VCPUs: h.VCPUs, MemoryGB: h.MemoryGB,
			GPUs: gpus, GPUModel: model, Labels: h.Labels, State: catalog.HostReady}
		d := net.Dialer{Timeout: 2 * time.Second}
		if c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(h.Address, strconv.Itoa(h.Port))); err != nil {
			host.State, host.Reason = catalog.HostUnusable, "SSH does not answer: "+err.Error()
		} else {
			c.Close()
		}
		out = append(out, host)
	}
	return out, nil
}

// powerOn runs host i's power-on command when it has no node yet (it may
// be off), then waits for its SSH server to answer.
func (p *Provider) powerOn(ctx context.Context, i int) error {
	h := p.cfg.Hosts[i]
	if h.PowerOnCommand == "" || p.nodesOn(i) > 1 {
		return nil // the node being provisioned is already counted
	}
	if out, err := exec.CommandContext(ctx, "sh", "-c", h.PowerOnCommand).CombinedOutput(); err != nil {
		return core.Errorf(core.EUNAVAILABLE, "host %s: power_on_command failed: %v: %s", h.Address, err, strings.TrimSpace(string(out)))
	}
	addr := net.JoinHostPort(h.Address, strconv.Itoa(h.Port))
	deadline := time.Now().Add(powerOnWait)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			p.log.Info("host powered on", "host", h.Address)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return core.Errorf(core.EUNAVAILABLE, "host %s: SSH did not answer within %s of power_on_command", h.Address, powerOnWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// powerOnWait bounds how long a powered-on host may take to answer SSH.
const powerOnWait = 5 * time.Minute

// powerOffIfIdle runs host i's power-off command once it has no node.
func (p *Provider) powerOffIfIdle(ctx context.Context, i int) error {
	h := p.cfg.Hosts[i]
	if h.PowerOffCommand == "" || p.nodesOn(i) > 0 {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "sh", "-c", h.PowerOffCommand).CombinedOutput(); err != nil {
		// The node is released all the same; the host stays on.
		p.log.Warn("power_off_command failed", "host", h.Address, "err", err, "output", strings.TrimSpace(string(out)))
		return nil
	}
	p.log.Info("host powered off: no node left", "host", h.Address)
	return nil
}

// nodesOn counts the nodes placed on host i.
func (p *Provider) nodesOn(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pl := range p.placed {
		if pl.host == i {
			n++
		}
	}
	return n
}

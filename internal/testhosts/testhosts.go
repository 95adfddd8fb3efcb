// Package testhosts makes machines for tests on one host: network
// namespaces joined by a bridge, each with its own address and a real
// OpenSSH server (Debian's openssh-server), so that providers that reach
// hosts over SSH are tested against the real thing. It needs root,
// iproute2 and openssh-server: without them a test skips, saying so
// (internal/testenv; under SHOAL_TEST_REQUIRE_ALL, as scripts/test runs,
// it fails).
package testhosts

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// T is what New needs of a test (testing.TB has it); a benchmark program
// passes its own.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// poolSeq numbers the pools of this process.
var poolSeq atomic.Int32

// Host is a "machine" of a Pool: a network namespace with its own
// address, work dir and a real OpenSSH server, joined to the pool's bridge.
type Host struct {
	NS, Addr, Dir string
	veth          string // the namespace's side
	sshd          *exec.Cmd
}

// Pool is a test's machines: the bridge's address (where a server they
// reach listens), the hosts, and the client key and known_hosts to reach
// them.
type Pool struct {
	bridge     string
	BridgeAddr string
	Hosts      []*Host
	Key        string
	KnownHosts string
}

// New starts n hosts. It needs root, iproute2 and Debian's
// openssh-server (the test command installs them): without them the test
// skips, or fails under SHOAL_TEST_REQUIRE_ALL. Everything it starts
// goes at cleanup.
func New(t T, n int) *Pool {
	t.Helper()
	testenv.Root(t, "makes network namespaces with an OpenSSH server in each")
	testenv.Files(t, "OpenSSH's server and iproute2", "apt-get install openssh-server openssh-client iproute2",
		"/usr/sbin/sshd", "/usr/sbin/ip", "/usr/bin/ssh-keygen")
	b := make([]byte, 3)
	rand.Read(b)
	id := hex.EncodeToString(b)
	p := &Pool{bridge: "shb" + id}
	dir := t.TempDir()
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		for _, h := range p.Hosts {
			if h.sshd != nil && h.sshd.Process != nil {
				h.sshd.Process.Kill()
				h.sshd.Wait()
			}
			KillUnder(h.Dir)
			exec.Command("ip", "netns", "del", h.NS).Run()
		}
		exec.Command("ip", "link", "del", p.bridge).Run()
	})
	// Each pool gets a subnet no other bridge on this host has: test
	// binaries run side by side (e2e beside provider/sshpool), and two
	// bridges with one subnet send a pool's packets to the other's hosts.
	// The claim (pick a free subnet, give the bridge its address) holds a
	// lock every process of the run takes.
	unlock := lockSubnets(t)
	subnet, err := freeSubnet(int(poolSeq.Add(1)))
	if err != nil {
		unlock()
		t.Fatalf("%v", err)
	}
	p.BridgeAddr = subnet + ".1"
	sh("ip", "link", "add", p.bridge, "type", "bridge")
	sh("ip", "addr", "add", p.BridgeAddr+"/24", "dev", p.bridge)
	unlock()
	sh("ip", "link", "set", p.bridge, "up")
	os.MkdirAll("/run/sshd", 0o755)
	p.Key = filepath.Join(dir, "id_ed25519")
	sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", p.Key)
	pub, _ := os.ReadFile(p.Key + ".pub")
	var known strings.Builder
	for i := 0; i < n; i++ {
		h := &Host{NS: fmt.Sprintf("shoal-%s-%d", id, i), Addr: fmt.Sprintf("%s.%d", subnet, 10+i), Dir: filepath.Join(dir, fmt.Sprintf("host%d", i)), veth: fmt.Sprintf("shp%s%d", id, i)}
		p.Hosts = append(p.Hosts, h)
		os.MkdirAll(h.Dir, 0o755)
		outer := fmt.Sprintf("shv%s%d", id, i)
		sh("ip", "netns", "add", h.NS)
		sh("ip", "link", "add", outer, "type", "veth", "peer", "name", h.veth)
		sh("ip", "link", "set", h.veth, "netns", h.NS)
		sh("ip", "link", "set", outer, "master", p.bridge, "up")
		sh("ip", "netns", "exec", h.NS, "ip", "addr", "add", h.Addr+"/24", "dev", h.veth)
		sh("ip", "netns", "exec", h.NS, "ip", "link", "set", h.veth, "up")
		sh("ip", "netns", "exec", h.NS, "ip", "link", "set", "lo", "up")
		hostKey := filepath.Join(h.Dir, "ssh_host_ed25519_key")
		sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
		os.WriteFile(filepath.Join(h.Dir, "authorized_keys"), pub, 0o600)
		cfg := filepath.Join(h.Dir, "sshd_config")
		os.WriteFile(cfg, []byte(fmt.Sprintf(`ListenAddress %s
Port 22
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile %s
Subsystem sftp internal-sftp
SetEnv PATH=%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
`, h.Addr, hostKey, filepath.Join(h.Dir, "authorized_keys"), filepath.Join(h.Dir, "sshd.pid"), h.BinDir())), 0o600)
		h.sshd = exec.Command("ip", "netns", "exec", h.NS, "/usr/sbin/sshd", "-D", "-e", "-f", cfg)
		logf, _ := os.Create(filepath.Join(h.Dir, "sshd.log"))
		h.sshd.Stdout, h.sshd.Stderr = logf, logf
		if err := h.sshd.Start(); err != nil {
			t.Fatalf("%v", err)
		}
		hk, _ := os.ReadFile(hostKey + ".pub")
		fields := strings.Fields(string(hk))
		fmt.Fprintf(&known, "%s %s %s\n", h.Addr, fields[0], fields[1])
	}
	p.KnownHosts = filepath.Join(dir, "known_hosts")
	os.WriteFile(p.KnownHosts, []byte(known.String()), 0o600)
	for _, h := range p.Hosts {
		// Generous: on a loaded two-core CI machine sshd can take seconds.
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", h.Addr+":22", time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sshd on %s did not answer: %v (log: %s)", h.Addr, err, filepath.Join(h.Dir, "sshd.log"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return p
}

// BinDir is a directory first on the PATH of the host's SSH sessions:
// a test puts there the programs the host has and this machine lacks
// (a stand-in nvidia-smi: no GPU here).
func (h *Host) BinDir() string { return filepath.Join(h.Dir, "bin") }

// LocationYAML is a server config's `locations:` entry for an ssh
// location over the pool, each host declaring vcpus.
func (p *Pool) LocationYAML(name string, vcpus int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    provider: ssh\n    known_hosts: %s\n    hosts:\n", name, p.KnownHosts)
	for _, h := range p.Hosts {
		fmt.Fprintf(&b, "      - {address: %s, user: root, identity_file: %s, vcpus: %d, memory_gb: 16, remote_dir: %s}\n", h.Addr, p.Key, vcpus, filepath.Join(h.Dir, "shoal"))
	}
	return b.String()
}

// LinkCommand is the shell command that takes host i off the network
// (up false) or back on it: a stand-in for powering a machine off and on.
func (p *Pool) LinkCommand(i int, up bool) string {
	state := "down"
	if up {
		state = "up"
	}
	return fmt.Sprintf("ip netns exec %s ip link set %s %s", p.Hosts[i].NS, p.Hosts[i].veth, state)
}

// Cut takes host i off the network, as a pulled cable does.
func (p *Pool) Cut(t T, i int) {
	t.Helper()
	h := p.Hosts[i]
	if out, err := exec.Command("ip", "netns", "exec", h.NS, "ip", "link", "set", h.veth, "down").CombinedOutput(); err != nil {
		t.Fatalf("cutting %s: %v %s", h.Addr, err, out)
	}
}

// KillUnder kills the processes whose command line or working directory
// names dir (the agents and jobs a host ran).
func KillUnder(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, pd := range procs {
		pid, err := strconv.Atoi(filepath.Base(pd))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(pd, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(pd, "cwd"))
		if strings.Contains(string(cmdline), dir) || strings.HasPrefix(cwd, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

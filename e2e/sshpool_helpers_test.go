package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// poolSeq numbers the pools of this test run.
var poolSeq atomic.Int32

// poolHost is a "machine" of an SSH pool for the tests: a network
// namespace with its own address and a real OpenSSH server, joined to the
// test's bridge.
type poolHost struct {
	ns, addr, dir string
	veth          string // the namespace's side
	sshd          *exec.Cmd
}

// sshPool is the test's pool: the bridge's address (where the server
// listens), the hosts, and the client key and known_hosts to reach them.
type sshPool struct {
	bridge, bridgeAddr string
	hosts              []*poolHost
	key, knownHosts    string
}

// newSSHPool starts n hosts. It needs root, iproute2 and Debian's
// openssh-server (the test command installs them) and fails, not skips,
// without them. Everything it starts goes at cleanup.
func newSSHPool(t *testing.T, n int) *sshPool {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the SSH pool tests make network namespaces and need root (run scripts/test as root)")
	}
	for _, bin := range []string{"/usr/sbin/sshd", "/usr/sbin/ip", "/usr/bin/ssh-keygen"} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s not found: apt-get install openssh-server iproute2", bin)
		}
	}
	b := make([]byte, 3)
	rand.Read(b)
	id := hex.EncodeToString(b)
	// Each pool of the run gets its own subnet (parallel tests, and runs
	// of other processes, most likely a different one).
	subnet := fmt.Sprintf("10.213.%d", 1+(os.Getpid()+int(poolSeq.Add(1))*7)%250)
	p := &sshPool{bridge: "shb" + id, bridgeAddr: subnet + ".1"}
	dir := t.TempDir()
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		for _, h := range p.hosts {
			if h.sshd != nil && h.sshd.Process != nil {
				h.sshd.Process.Kill()
				h.sshd.Wait()
			}
			killUnder(h.dir)
			exec.Command("ip", "netns", "del", h.ns).Run()
		}
		exec.Command("ip", "link", "del", p.bridge).Run()
	})
	sh("ip", "link", "add", p.bridge, "type", "bridge")
	sh("ip", "addr", "add", p.bridgeAddr+"/24", "dev", p.bridge)
	sh("ip", "link", "set", p.bridge, "up")
	os.MkdirAll("/run/sshd", 0o755)
	p.key = filepath.Join(dir, "id_ed25519")
	sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", p.key)
	pub, _ := os.ReadFile(p.key + ".pub")
	var known strings.Builder
	for i := 0; i < n; i++ {
		h := &poolHost{ns: fmt.Sprintf("shoal-%s-%d", id, i), addr: fmt.Sprintf("%s.%d", subnet, 10+i), dir: filepath.Join(dir, fmt.Sprintf("host%d", i)), veth: fmt.Sprintf("shp%s%d", id, i)}
		p.hosts = append(p.hosts, h)
		os.MkdirAll(h.dir, 0o755)
		outer := fmt.Sprintf("shv%s%d", id, i)
		sh("ip", "netns", "add", h.ns)
		sh("ip", "link", "add", outer, "type", "veth", "peer", "name", h.veth)
		sh("ip", "link", "set", h.veth, "netns", h.ns)
		sh("ip", "link", "set", outer, "master", p.bridge, "up")
		sh("ip", "netns", "exec", h.ns, "ip", "addr", "add", h.addr+"/24", "dev", h.veth)
		sh("ip", "netns", "exec", h.ns, "ip", "link", "set", h.veth, "up")
		sh("ip", "netns", "exec", h.ns, "ip", "link", "set", "lo", "up")
		hostKey := filepath.Join(h.dir, "ssh_host_ed25519_key")
		sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
		os.WriteFile(filepath.Join(h.dir, "authorized_keys"), pub, 0o600)
		cfg := filepath.Join(h.dir, "sshd_config")
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
`, h.addr, hostKey, filepath.Join(h.dir, "authorized_keys"), filepath.Join(h.dir, "sshd.pid"))), 0o600)
		h.sshd = exec.Command("ip", "netns", "exec", h.ns, "/usr/sbin/sshd", "-D", "-e", "-f", cfg)
		logf, _ := os.Create(filepath.Join(h.dir, "sshd.log"))
		h.sshd.Stdout, h.sshd.Stderr = logf, logf
		if err := h.sshd.Start(); err != nil {
			t.Fatal(err)
		}
		hk, _ := os.ReadFile(hostKey + ".pub")
		fields := strings.Fields(string(hk))
		fmt.Fprintf(&known, "%s %s %s\n", h.addr, fields[0], fields[1])
	}
	p.knownHosts = filepath.Join(dir, "known_hosts")
	os.WriteFile(p.knownHosts, []byte(known.String()), 0o600)
	for _, h := range p.hosts {
		waitFor(t, 10*time.Second, "sshd on "+h.addr, func() (bool, string) {
			c, err := net.DialTimeout("tcp", h.addr+":22", time.Second)
			if err != nil {
				return false, err.Error()
			}
			c.Close()
			return true, ""
		})
	}
	return p
}

// config is the YAML of an ssh location over the pool, each host
// declaring vcpus.
func (p *sshPool) config(name string, vcpus int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    provider: ssh\n    known_hosts: %s\n    hosts:\n", name, p.knownHosts)
	for _, h := range p.hosts {
		fmt.Fprintf(&b, "      - {address: %s, user: root, identity_file: %s, vcpus: %d, memory_gb: 16, remote_dir: %s}\n", h.addr, p.key, vcpus, filepath.Join(h.dir, "shoal"))
	}
	return b.String()
}

// cut takes a host off the network, as a pulled cable does.
func (p *sshPool) cut(t *testing.T, i int) {
	t.Helper()
	h := p.hosts[i]
	if out, err := exec.Command("ip", "netns", "exec", h.ns, "ip", "link", "set", h.veth, "down").CombinedOutput(); err != nil {
		t.Fatalf("cutting %s: %v %s", h.addr, err, out)
	}
}

// killUnder kills the processes whose command line names dir (the agents
// and jobs a host ran).
func killUnder(dir string) {
	for _, pr := range allProcs() {
		if strings.Contains(pr.cmdline, dir) || strings.Contains(pr.cwd, dir) {
			_ = syscall.Kill(pr.pid, syscall.SIGKILL)
		}
	}
}

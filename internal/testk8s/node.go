package testk8s

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// node is the cluster's one node: containerd and a kubelet, started by a
// shell that is the first process of a private PID and mount namespace.
// The kubelet writes system settings (/proc/sys) and fixed paths
// (/var/lib/kubelet, /var/log/pods, /run/containerd): inside the mount
// namespace scratch directories and files stand over them, so the host
// is left as it was; killing the shell ends every process in the PID
// namespace at once, shims and containers included.
type node struct {
	proc       *proc
	dir, sock  string
	cgroupRoot string // "/shoal-testk8s-<pid>", under every hierarchy
	cgroupDirs []string
	bridge     string
	subnet     string
	gateway    string
}

// kubeletSysctls are the settings the kubelet writes (with
// protectKernelDefaults false): scratch files stand over them.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// nodeScript runs as the namespace's first process: it makes the mount
// namespace private, mounts the PID namespace's /proc, stands scratch
// directories over the kubelet's fixed paths and scratch files over the
// settings it writes, then starts containerd and, once its socket is up,
// the kubelet; it waits for them (and, as PID 1, reaps orphans).
const nodeScript = `set -eu
mount --make-rprivate /
mount -t proc proc /proc
mount --bind "$D/varlib" /var/lib
mount --bind "$D/varlog" /var/log
mount -t tmpfs -o mode=755 tmpfs /run
for s in $SYSCTLS; do
  [ -e "/proc/sys/$s" ] || continue
  f="$D/sysctl/$(echo "$s" | tr / _)"
  cat "/proc/sys/$s" > "$f"
  mount --bind "$f" "/proc/sys/$s"
done
containerd --config "$D/containerd.toml" &
i=0
while [ ! -S "$SOCK" ]; do
  i=$((i+1)); [ $i -lt 300 ] || { echo "containerd's socket never appeared" >&2; exit 1; }
  sleep 0.1
done
"$KUBELET" --config="$D/kubelet.yaml" --kubeconfig="$KCFG" --hostname-override="$NODE" --v=1 &
wait
`

// startNode writes the node's configuration and starts it.
func startNode(ctx context.Context, c *Cluster, kubeconfigPath string, pk *pki, kubeletPort int) (n *node, err error) {
	n = &node{dir: filepath.Join(c.dir, "node")}
	n.sock = filepath.Join(n.dir, "containerd.sock")
	defer func() {
		if err != nil {
			n.cleanup()
		}
	}()
	for _, d := range []string{"varlib", "varlog", "sysctl", "cni", "containerd"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return n, err
		}
	}
	if err := n.makeCgroupRoot(); err != nil {
		return n, err
	}
	if err := n.pickBridge(); err != nil {
		return n, err
	}
	cni := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "shoal-test", "plugins": [{"type": "bridge", "bridge": %q,
  "isGateway": true, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
`, n.bridge, filepath.Join(n.dir, "cni-ipam"), n.subnet, n.gateway)
	// The CRI plugin asks oom_score_adj -998 for sandboxes, which needs
	// CAP_SYS_RESOURCE (root here lacks it; every sandbox would fail with
	// "can't get final child's PID from pipe"): restrict_oom_score_adj.
	containerd := joinLines(
		`version = 2`,
		fmt.Sprintf(`root = %q`, filepath.Join(n.dir, "containerd")),
		`state = "/run/containerd"`,
		`disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]`,
		`[grpc]`,
		fmt.Sprintf(`  address = %q`, n.sock),
		`[plugins."io.containerd.grpc.v1.cri"]`,
		fmt.Sprintf(`  sandbox_image = %q`, PauseImage),
		`  restrict_oom_score_adj = true`,
		`  [plugins."io.containerd.grpc.v1.cri".containerd]`,
		`    snapshotter = "overlayfs"`,
		`    default_runtime_name = "runc"`,
		`    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]`,
		`      runtime_type = "io.containerd.runc.v2"`,
		`      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]`,
		`        SystemdCgroup = false`,
		`  [plugins."io.containerd.grpc.v1.cri".cni]`,
		`    bin_dir = "/usr/lib/cni"`,
		fmt.Sprintf(`    conf_dir = %q`, filepath.Join(n.dir, "cni")),
	)
	// The kubelet changes nothing on the host it can be told not to: no
	// iptables chains, no OOM score of its own, no image GC, eviction only
	// when the disk is all but full; it serves on 127.0.0.1 to the
	// apiserver's client certificate only.
	kubelet := joinLines(
		`apiVersion: kubelet.config.k8s.io/v1beta1`,
		`kind: KubeletConfiguration`,
		`address: 127.0.0.1`,
		`port: `+strconv.Itoa(kubeletPort),
		`readOnlyPort: 0`,
		`healthzPort: 0`,
		`containerRuntimeEndpoint: unix://`+n.sock,
		`authentication:`,
		`  anonymous: {enabled: false}`,
		`  webhook: {enabled: false}`,
		`  x509: {clientCAFile: `+pk.CA+`}`,
		`authorization: {mode: AlwaysAllow}`,
		`cgroupDriver: cgroupfs`,
		`cgroupRoot: `+n.cgroupRoot,
		`failSwapOn: false`,
		`failCgroupV1: false`,
		`makeIPTablesUtilChains: false`,
		`protectKernelDefaults: false`,
		`oomScoreAdj: 0`,
		`imageGCHighThresholdPercent: 100`,
		`imageGCLowThresholdPercent: 99`,
		`evictionHard: {memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}`,
		`resolvConf: ""`,
		`serializeImagePulls: false`,
		`syncFrequency: 5s`,
		`nodeStatusUpdateFrequency: 2s`,
	)
	for name, data := range map[string]string{
		"cni/10-shoal-test.conflist": cni, "containerd.toml": containerd, "kubelet.yaml": kubelet,
	} {
		if err := os.WriteFile(filepath.Join(n.dir, name), []byte(data), 0o644); err != nil {
			return n, err
		}
	}
	env := []string{"D=" + n.dir, "SOCK=" + n.sock, "KUBELET=" + c.bin.Path("kubelet"),
		"KCFG=" + kubeconfigPath, "NODE=" + c.NodeName, "SYSCTLS=" + strings.Join(kubeletSysctls, " ")}
	n.proc, err = startProc(c.dir, "node", &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID},
		env, "/bin/bash", "-c", nodeScript)
	if err != nil {
		return n, err
	}
	if err := waitFor(ctx, n.proc, "containerd's socket", func() error {
		_, err := n.ctr(ctx, "version")
		return err
	}); err != nil {
		return n, err
	}
	return n, nil
}

// ctr runs containerd's CLI on the node's containerd, in the k8s.io
// namespace (the CRI's).
func (n *node) ctr(ctx context.Context, args ...string) (string, error) {
	full := append([]string{"--address", n.sock, "--namespace", "k8s.io"}, args...)
	out, err := exec.CommandContext(ctx, "ctr", full...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, tail(strings.TrimSpace(string(out)), 2000))
	}
	return string(out), nil
}

// importImage loads an image archive into the node's containerd and
// unpacks it for the CRI's snapshotter.
func (n *node) importImage(ctx context.Context, tarball string) error {
	_, err := n.ctr(ctx, "images", "import", "--snapshotter", "overlayfs", tarball)
	return err
}

// cgroupMounts are the host's cgroup hierarchies: every directory under
// /sys/fs/cgroup that is a cgroup file system's root (cgroup v1's one
// per controller, the unified one of hybrid and v2 machines).
func cgroupMounts() []string {
	var out []string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.procs"); err == nil {
		return []string{"/sys/fs/cgroup"}
	}
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		d := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue // the cpu,cpuacct style symbolic links
		}
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// makeCgroupRoot makes the kubelet's cgroup root, its own per cluster so
// that concurrent test processes' kubelets do not share kubepods, in
// every hierarchy (the kubelet refuses a root missing from one). A new
// cpuset cgroup has no CPUs or memory nodes: it gets its parent's.
func (n *node) makeCgroupRoot() error {
	n.cgroupRoot = "/shoal-testk8s-" + strconv.Itoa(os.Getpid())
	for _, m := range cgroupMounts() {
		removeStaleCgroups(m)
		d := filepath.Join(m, n.cgroupRoot)
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("the kubelet's cgroup root: %w", err)
		}
		n.cgroupDirs = append(n.cgroupDirs, d)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
					return fmt.Errorf("the kubelet's cgroup root: %s: %w", f, err)
				}
			}
		}
	}
	if len(n.cgroupDirs) == 0 {
		return fmt.Errorf("no cgroup hierarchy under /sys/fs/cgroup")
	}
	return nil
}

// removeStaleCgroups removes the cgroup roots of test processes that no
// longer run (killed by a time limit before their cleanup), so they do
// not pile up on a CI machine; a cgroup still holding processes stays.
func removeStaleCgroups(mount string) {
	stale, _ := filepath.Glob(filepath.Join(mount, "shoal-testk8s-*"))
	for _, d := range stale {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "shoal-testk8s-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			continue
		}
		removeCgroupTree(d, time.Now())
	}
}

// removeCgroupTree removes a cgroup and those under it, deepest first,
// retrying until deadline while killed processes leave them.
func removeCgroupTree(root string, deadline time.Time) {
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		for os.Remove(d) != nil && time.Now().Before(deadline) {
			if _, err := os.Stat(d); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// pickBridge chooses the pods' bridge and subnet, 10.244.X.0/24 with the
// bridge shk8s-X, for an X that no interface of the host uses yet.
func (n *node) pickBridge() error {
	addrs, _ := net.InterfaceAddrs()
	used := map[int]bool{}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip4 := ipn.IP.To4(); ip4 != nil && ip4[0] == 10 && ip4[1] == 244 {
				used[int(ip4[2])] = true
			}
		}
	}
	start := os.Getpid() % 200
	for i := 0; i < 200; i++ {
		x := 20 + (start+i)%200
		name := "shk8s-" + strconv.Itoa(x)
		if _, err := net.InterfaceByName(name); err == nil || used[x] {
			continue
		}
		n.bridge, n.subnet, n.gateway = name, fmt.Sprintf("10.244.%d.0/24", x), fmt.Sprintf("10.244.%d.1", x)
		return nil
	}
	return fmt.Errorf("no free 10.244.X.0/24 subnet for the pods' bridge")
}

// cleanup removes the node's cgroups (deepest first, waiting for the
// killed processes to leave them) and its bridge.
func (n *node) cleanup() {
	deadline := time.Now().Add(15 * time.Second)
	for _, root := range n.cgroupDirs {
		removeCgroupTree(root, deadline)
	}
	if n.bridge != "" {
		if _, err := net.InterfaceByName(n.bridge); err == nil {
			exec.Command("ip", "link", "delete", n.bridge).Run()
		}
	}
}

package testk8s

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RSS is the resident memory of every process of the cluster, in bytes:
// the control plane's and everything under the node's namespace
// (containerd, the kubelet, shims and the pods' processes), read from
// /proc. It is for reporting the harness's cost, not for decisions.
func (c *Cluster) RSS() int64 {
	roots := map[int]bool{}
	for _, p := range c.procs {
		if p.cmd.Process != nil && !p.exited() {
			roots[p.cmd.Process.Pid] = true
		}
	}
	parent := map[int]int{}
	rss := map[int]int64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			fields := strings.Fields(v)
			if len(fields) == 0 {
				continue
			}
			switch k {
			case "PPid":
				parent[pid], _ = strconv.Atoi(fields[0])
			case "VmRSS":
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				rss[pid] = kb * 1024
			}
		}
		f.Close()
	}
	var total int64
	for pid, bytes := range rss {
		for p, hops := pid, 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if roots[p] {
				total += bytes
				break
			}
		}
	}
	return total
}

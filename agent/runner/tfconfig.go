package runner

import (
	"encoding/json"
	"net"
	"strconv"
)

// tfConfig is the TF_CONFIG Azure ML gives each process of a tensorflow
// job: the whole cluster (every worker's and every parameter server's
// host:port) and this process's task. The tasks are the job's processes
// in global rank order, workers first, then parameter servers; process
// local of node n listens on that node's reserved port + local (the
// agent picks its port as the start of a block of 16 free ports: a node
// of more tasks than that may meet a port in use). On one node every
// task is on the loopback, which a job in a network namespace or a
// container of its own has too (the node's address may not be there); a
// task whose node is unknown is on the master address.
func tfConfig(t Task, rank int) string {
	workers, ps := t.WorkerCount, t.ParameterServerCount
	if workers < 1 {
		workers = t.NodeCount * t.ProcessesPerNode
	}
	addr := func(g int) string {
		n, local := g/t.ProcessesPerNode, g%t.ProcessesPerNode
		host, port := t.MasterAddr, t.MasterPort
		if t.NodeCount == 1 {
			host = "127.0.0.1"
		}
		if n < len(t.Peers) && t.Peers[n] != "" {
			if h, p, err := net.SplitHostPort(t.Peers[n]); err == nil {
				host = h
				if v, err := strconv.Atoi(p); err == nil && v > 0 {
					port = v
				} else {
					port = DefaultMasterPort
				}
			}
		}
		return net.JoinHostPort(host, strconv.Itoa(port+local))
	}
	cluster := map[string][]string{"worker": make([]string, 0, workers)}
	for g := 0; g < workers; g++ {
		cluster["worker"] = append(cluster["worker"], addr(g))
	}
	if ps > 0 {
		for g := workers; g < workers+ps; g++ {
			cluster["ps"] = append(cluster["ps"], addr(g))
		}
	}
	task := map[string]any{"type": "worker", "index": rank}
	if rank >= workers {
		task = map[string]any{"type": "ps", "index": rank - workers}
	}
	b, _ := json.Marshal(map[string]any{"cluster": cluster, "task": task, "environment": "cloud"})
	return string(b)
}

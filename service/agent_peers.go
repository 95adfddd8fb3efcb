package service

import (
	"net"
	"strconv"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// rankPeers returns every rank's node of attempt a as host:port, in rank
// order: the address and the port the node reserved for a distributed
// job's rendezvous (rank 0's is MasterAddr:MasterPort). A tensorflow
// job's TF_CONFIG names each task by them. A node gone from the store
// (a rank lost while the task is built) leaves its place empty: the
// attempt fails with it anyway, and the others keep their indexes.
func rankPeers(tx store.Tx, a *job.Attempt) []string {
	out := make([]string, len(a.Ranks))
	for i, rs := range a.Ranks {
		n, err := tx.GetNode(rs.NodeID)
		if err != nil || n.PrivateIPAddress == "" {
			continue
		}
		out[i] = net.JoinHostPort(n.PrivateIPAddress, strconv.Itoa(n.Port))
	}
	return out
}

package rank

import (
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

// A node that owns some of its host's GPUs gives its jobs only those.
func TestJobsSeeTheNodesGPUs(t *testing.T) {
	for _, tc := range []struct{ devices, want string }{{"1,3", "1,3"}, {"", ""}} {
		a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "n", GPUDevices: tc.devices})
		env := a.newRank(&node.AgentTask{RankRef: node.RankRef{AttemptID: "a"}, JobName: "j"}).env("/out")
		if env["CUDA_VISIBLE_DEVICES"] != tc.want || env["NVIDIA_VISIBLE_DEVICES"] != tc.want {
			t.Errorf("devices %q: env %q %q", tc.devices, env["CUDA_VISIBLE_DEVICES"], env["NVIDIA_VISIBLE_DEVICES"])
		}
		if _, set := env["CUDA_VISIBLE_DEVICES"]; set != (tc.want != "") {
			t.Errorf("devices %q: CUDA_VISIBLE_DEVICES set %v", tc.devices, set)
		}
	}
}

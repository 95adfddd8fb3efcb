package agentapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// BenchmarkIdleSyncAt10kNodes is one sync of an idle node that has
// nothing to say, among 10,000 nodes: at full size
// (bench/scale.sh) the agents' syncs are most of the server's CPU
// (BeginSync 38-41 % of its profile), nearly all of them such syncs.
func BenchmarkIdleSyncAt10kNodes(b *testing.B) {
	const nodes = 10000
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("cpu-n%05d", i)
	}
	db := storeWithIdleNodes(b, ids...)
	s := New(Config{Store: db, NodeLeaseTTL: time.Hour, NodeLeaseGrace: time.Minute})
	ctx := context.Background()
	req := &node.AgentSyncRequest{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := s.SyncNode(ctx, ids[i%nodes], req, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Start) > 0 || resp.Exit {
			b.Fatalf("an idle node's sync says %+v", resp)
		}
	}
}

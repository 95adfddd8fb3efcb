package agentapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// maxGPUsPerSample bounds a sample: no machine has more GPUs than this.
const maxGPUsPerSample = 64

// RecordGPUSample records a node's GPUs' utilisation, sampled while it
// runs rank of attempt, as an event of the attempt's job ("rank 0 on
// gpu-n1: GPU 0 NVIDIA A100 87%, GPU 1 NVIDIA A100 91%"). Only the node
// running the rank may report it.
func (s *Server) RecordGPUSample(ctx context.Context, nodeID, attemptID string, rank int, sample *node.GPUSample) error {
	if len(sample.Devices) == 0 || len(sample.Devices) > maxGPUsPerSample {
		return core.FieldErrorf("devices", "a sample has 1 to %d GPUs, not %d", maxGPUsPerSample, len(sample.Devices))
	}
	parts := make([]string, len(sample.Devices))
	for i, d := range sample.Devices {
		if d.UtilizationPercent < 0 || d.UtilizationPercent > 100 || d.Index < 0 {
			return core.FieldErrorf(fmt.Sprintf("devices[%d]", i), "utilization_percent must be 0 to 100 and index 0 or more")
		}
		name := strings.TrimSpace(d.Name)
		if len(name) > 100 {
			name = name[:100]
		}
		parts[i] = strings.TrimSpace(fmt.Sprintf("GPU %d %s %d%%", d.Index, name, d.UtilizationPercent))
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		a, _, err := nodeRank(tx, n, attemptID, rank)
		if err != nil {
			return err
		}
		j, err := tx.GetJob(a.Workspace, a.JobName)
		if err != nil {
			return err
		}
		ctx := identity.WithPrincipal(ctx, node.NodePrincipal(n))
		return appendJobEvent(ctx, tx, j, core.EventGPUUtilization,
			fmt.Sprintf("attempt %d, rank %d on %s: %s", a.Number, rank, n.ID, strings.Join(parts, ", ")))
	})
}

// appendJobEvent records an event on a job in tx, as the principal of
// ctx: service.AppendJobEvent's record, written here since this package
// cannot link service (which links it).
func appendJobEvent(ctx context.Context, tx store.Tx, j *job.Job, kind, reason string) error {
	return tx.AppendEvent(&core.Event{
		Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob,
		ResourceName: j.Name, Kind: kind, Actor: identity.ActorName(ctx), Reason: reason,
	})
}

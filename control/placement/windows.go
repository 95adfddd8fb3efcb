package placement

import (
	"time"

	"github.com/shoal-ml/shoal/decide/scalewindow"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
)

// windowBounds gives cs the max_instances a scale window of c sets at
// now, and the sentence its waiting jobs quote, so that a job queued at
// night reads "max_instances is 0 in scale window nights until 07:00
// (…)" rather than a wait for the autoscaler.
func windowBounds(cs *scheduler.ClusterState, c *compute.Compute, now time.Time) {
	if c.IsInstance() {
		return
	}
	if b, ok := scalewindow.Of(c, now); ok && b.Window != nil {
		cs.MaxInstances, cs.Window = b.Max, b.WaitReason(now)
	}
}

// capFreeNodes keeps a cluster that a scale window caps from starting work
// on nodes above the cap: of its free nodes, only as many as the window's
// max leaves beside the busy and preparing ones take jobs; the others are
// on their way out (the scaling pass releases them).
func capFreeNodes(nodes []scheduler.Node, cs scheduler.ClusterState) {
	if cs.Window == "" {
		return
	}
	room := max(cs.MaxInstances-cs.Busy-cs.Provisioning, 0)
	for i := range nodes {
		if !nodes[i].Free {
			continue
		}
		if room > 0 {
			room--
			continue
		}
		nodes[i].Free = false
	}
}

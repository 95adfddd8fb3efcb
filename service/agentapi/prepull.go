package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/store"
)

// Node events of the pre-pull.
const (
	// eventNodeImagesPulled: a node finished its cluster's pre-pulls and
	// takes work.
	eventNodeImagesPulled = "node_images_pulled"
	// eventNodePrepullFailed: an image of the cluster's prepull_images
	// could not be pulled (or resolved); the node takes work anyway.
	eventNodePrepullFailed = "node_prepull_failed"
)

// prepullOrder is what joining node n pulls before it takes work: its
// cluster's prepull_images resolved to images, with their registries'
// logins. Nil when the cluster lists none, or the node is not a
// cluster's or has no usable container runtime (which the event notes).
// An entry that no longer resolves (an environment archived since the
// cluster was created) is left out and noted.
func (s *Server) prepullOrder(tx store.Tx, n *node.Node) (order *compute.PrepullOrder, notes []string, err error) {
	if n.Role != "" {
		return nil, nil, nil
	}
	c, err := tx.GetCompute(n.Workspace, n.Compute)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	if len(c.PrepullImages) == 0 {
		return nil, nil, nil
	}
	if !n.Runtime.Usable() {
		return nil, []string{"prepull_images skipped: " + n.Runtime.Describe()}, nil
	}
	var images []string
	for i, entry := range c.PrepullImages {
		got, err := compute.ResolvePrepullImages(tx, n.Workspace, []string{entry}, s.cfg.CuratedEnvironments)
		if err != nil {
			if core.ErrorCode(err) == core.EINTERNAL {
				return nil, nil, err
			}
			notes = append(notes, fmt.Sprintf("prepull_images[%d] skipped: %s", i, err.Error()))
			continue
		}
		for _, img := range got {
			if !slices.Contains(images, img) {
				images = append(images, img)
			}
		}
	}
	if len(images) == 0 {
		return nil, notes, nil
	}
	creds, err := registries.ForImages(tx, s.cfg.SecretsKey, n.Workspace, images...)
	if err != nil {
		return nil, nil, err
	}
	return &compute.PrepullOrder{Images: images, Registries: creds}, notes, nil
}

// pullingReason is the state reason of a node pulling images.
func pullingReason(images []string) string {
	return "pulling images before taking work: " + strings.Join(images, ", ")
}

// recordNodeReport records what an agent's sync says of its host beyond
// its ranks: its container runtime and image cache (when they changed)
// and the end of its pre-pulls, which makes the node take work from now
// on; each image that failed is an event with the engine's words. It
// wakes the scheduler when the node became free.
func (s *Server) recordNodeReport(ctx context.Context, nodeID string, req *node.AgentSyncRequest) error {
	if req.Runtime == nil && req.Prepulled == nil {
		return nil
	}
	freed, key := false, ""
	err := s.store.Update(ctx, func(tx store.Tx) error {
		freed, key = false, "" // a run again (store.Store.Update) starts over
		n, err := tx.GetNode(nodeID)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil // released: the sync says so
		} else if err != nil {
			return err
		}
		changed := false
		if req.Runtime != nil && !sameRuntime(n.Runtime, req.Runtime) {
			n.Runtime, changed = req.Runtime, true
		}
		var events [][2]string
		if rep := req.Prepulled; rep != nil && len(n.PullingImages) > 0 {
			now := tx.Now()
			pulled := n.PullingImages
			n.PullingImages, n.StateReason, changed, freed = nil, "", true, true
			key = compute.ComputeKey(n.Workspace, n.Compute)
			if n.State == node.NodeIdle {
				// Its idle time starts now: it was not free before.
				n.IdleSince = &now
			}
			for _, f := range rep.Failed {
				events = append(events, [2]string{eventNodePrepullFailed, fmt.Sprintf("node %s could not pre-pull %s (it takes work anyway; a job with this image pulls it again): %s", n.ID, f.Image, f.Error)})
			}
			events = append(events, [2]string{eventNodeImagesPulled, fmt.Sprintf("node %s pre-pulled %d of %d images in %.1f s and takes work: %s",
				n.ID, len(rep.Pulled), len(pulled), rep.Seconds, strings.Join(rep.Pulled, ", "))})
		}
		if !changed {
			return nil
		}
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		c := &compute.Compute{Workspace: n.Workspace}
		c.Name = n.Compute
		ectx := identity.WithPrincipal(ctx, node.NodePrincipal(n))
		for _, e := range events {
			if err := compute.AppendComputeEvent(ectx, tx, c, e[0], e[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if freed {
		s.log.Info("node pre-pulled its images", slog.String("node", nodeID))
		// Free for its own compute's queue alone, as a joined node is.
		s.cfg.Changed(key)
	}
	return nil
}

// sameRuntime reports whether two runtime reports say the same.
func sameRuntime(a, b *catalog.ContainerRuntimeInfo) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

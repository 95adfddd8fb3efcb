package instances

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/control/provisioning"
	"github.com/shoal-ml/shoal/decide/instance"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/store"
)

// RunOnce runs one pass of the instance lifecycle at now: for every instance,
// instance.Step decides (operations, lost machines, idle shutdown,
// schedules) and this carries it out.
func (c *Loop) RunOnce(ctx context.Context, now time.Time) error {
	s := c.s
	sys := identity.WithPrincipal(ctx, identity.SystemPrincipal("instance lifecycle"))
	var inputs []instance.Input
	err := s.Store().View(sys, func(tx store.Tx) error {
		list, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true, Type: compute.ComputeTypeInstance})
		if err != nil {
			return err
		}
		for _, comp := range list {
			if comp.Instance == nil {
				continue
			}
			in := instance.Input{Compute: comp}
			nodes, err := tx.ListNodes(nodekind.NodeFilter{Workspace: comp.Workspace, Compute: comp.Name})
			if err != nil {
				return err
			}
			for _, n := range nodes {
				if n.Role == nodekind.NodeRoleInstance {
					in.Node = n
				} else {
					in.Slots = append(in.Slots, n)
				}
			}
			live, err := s.Live().Get(tx, comp.Workspace, comp.Name)
			if err != nil {
				return err
			}
			if in.Node != nil && live.Node == in.Node.ID && in.Node.State != nodekind.NodePreparing {
				in.Report = live.Report
			}
			in.ProxyLastRequest = live.ProxyLastRequest
			in.Schedules = c.compiledSchedules(comp)
			c.overlayIdle(comp)
			inputs = append(inputs, in)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// One instance's failure is its own (loop.Each): recorded on it,
	// retried with backoff, and the pass goes on with the others. Its
	// state and pending operation are in the key, so a user's stop,
	// start or delete is carried out at once.
	items := make([]loop.Item[instance.Input], len(inputs))
	for i, in := range inputs {
		st := in.Compute.Instance
		items[i] = loop.Item[instance.Input]{Key: compute.ComputeKey(in.Compute.Workspace, in.Compute.Name) + "#" + st.State + "#" + st.Pending + "#" + in.Compute.ProvisioningState, Value: in}
	}
	loop.Each(c.backoff, now, s.Logger(), "an instance's lifecycle step", items,
		func(in instance.Input) error { return c.instanceStep(sys, in, now) },
		func(in instance.Input, f loop.Failure) { c.recordFailure(sys, in.Compute, f) })
	return nil
}

// EventStepFailed is the kind of the compute event that records a failed
// lifecycle step of an instance (once per retry, not once per pass).
const EventStepFailed = "instance_step_failed"

// recordFailure records on instance comp that its step failed.
func (c *Loop) recordFailure(ctx context.Context, comp *compute.Compute, f loop.Failure) {
	err := c.s.Store().Update(ctx, func(tx store.Tx) error {
		cur, err := tx.GetCompute(comp.Workspace, comp.Name)
		if err != nil {
			return err
		}
		return compute.AppendComputeEvent(ctx, tx, cur, EventStepFailed, f.Reason("the instance's lifecycle step"))
	})
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		c.s.Logger().Warn("recording an instance's failure failed", slog.String("instance", comp.Workspace+"/"+comp.Name), slog.Any("err", err))
	}
}

// instanceStep runs instance.Step for one instance and carries it out.
func (c *Loop) instanceStep(ctx context.Context, in instance.Input, now time.Time) error {
	s := c.s
	out := instance.Step(in, now, instance.Config{IdleMinute: c.cfg.IdleMinute})
	if r := in.Report; r != nil {
		// Keep what show needs after a server restart.
		out.Status.SSHPort, out.Status.HostKeyFingerprint, out.Status.Apps = r.SSHPort, r.HostKeyFingerprint, r.Apps
		if r.HostKey != "" {
			out.Status.HostKey = r.HostKey
		}
	}
	key := compute.ComputeKey(in.Compute.Workspace, in.Compute.Name)
	changed := !computes.JSONEqual(computes.WithoutIdle(out.Status), computes.WithoutIdle(*in.Compute.Instance))
	idleChanged := !computes.JSONEqual(computes.IdlePart(out.Status), computes.IdlePart(*in.Compute.Instance))
	if !changed && len(out.Events) == 0 && idleChanged && !c.idleWriteDue(key, now) {
		// The idle clock moves on every pass while the instance is used:
		// keep it in memory and write it now and then.
		c.rememberIdle(key, out.Status)
		idleChanged = false
	}
	if changed || idleChanged || len(out.Events) > 0 {
		stale := false
		err := s.Store().Update(ctx, func(tx store.Tx) error {
			stale = false // a run again (store.Store.Update) decides anew
			cur, err := tx.GetCompute(in.Compute.Workspace, in.Compute.Name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				stale = true
				return nil
			} else if err != nil {
				return err
			}
			stored := *cur.Instance
			if !computes.JSONEqual(computes.WithoutIdle(stored), computes.WithoutIdle(*in.Compute.Instance)) || cur.ProvisioningState != in.Compute.ProvisioningState {
				// A user's operation came in meanwhile: decide again on
				// the next pass, from what is stored now.
				stale = true
				return nil
			}
			st := out.Status
			cur.Instance = &st
			if err := computes.SaveInstance(tx, cur); err != nil {
				return err
			}
			for _, e := range out.Events {
				if err := compute.AppendComputeEvent(ctx, tx, cur, e.Kind, e.Reason); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || stale {
			return err
		}
		// Written: the idle clock kept in memory is the stored one now
		// (not before the commit, which a run again may not repeat).
		c.idleWritten(key, now)
		if changed {
			s.Notify() // the scheduler sees a started or stopped instance
		}
	}
	comp := *in.Compute
	st := out.Status
	comp.Instance = &st
	switch {
	case out.Provision:
		if err := c.provisionInstance(ctx, &comp, now); err != nil {
			return err
		}
	case out.Release:
		c.releaseInstanceNodes(ctx, in, "instance "+stateVerb(st.State))
	case out.Delete:
		return c.deleteInstance(ctx, &comp)
	}
	return nil
}

func stateVerb(state string) string {
	switch state {
	case compute.InstanceDeleting:
		return "deleted"
	case compute.InstanceRestarting:
		return "restarting"
	case compute.InstanceUnusable:
		return "lost its machine"
	}
	return "stopping"
}

// provisionInstance creates the instance's own node (its ID is stable, so
// the node's work dir, the instance's home, is the same at every start)
// and asks the location's provider for it. When that fails — no quota, no
// capacity — the start fails and the instance is Stopped again.
func (c *Loop) provisionInstance(ctx context.Context, comp *compute.Compute, now time.Time) error {
	s := c.s
	var node *nodekind.Node
	var token string
	var loc *catalog.Location
	var failure error
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		// A run again starts over: a node or failure of a run rolled
		// back is none.
		node, token, loc, failure = nil, "", nil, nil
		cur, err := tx.GetCompute(comp.Workspace, comp.Name)
		if err != nil {
			return err
		}
		if cur.Instance == nil || cur.Instance.Pending != instance.PendingStart {
			return nil
		}
		loc, err = s.Catalog().Location(cur.Location)
		if err != nil {
			failure = err
			return c.failInstanceStart(ctx, tx, cur, err)
		}
		size, ok := s.Catalog().Size(cur.Size)
		if !ok {
			failure = core.Errorf(core.EINVALID, "size %s is no longer in the catalog", cur.Size)
			return c.failInstanceStart(ctx, tx, cur, failure)
		}
		id := compute.InstanceNodeID(cur, loc)
		if _, err := tx.GetNode(id); err == nil {
			return nil // being released still; the next pass provisions
		}
		if *cur.ReleaseQuotaOnStop && cur.Instance.PendingOperation != compute.OperationCreate {
			if err := s.CheckInstanceQuota(tx, cur); err != nil {
				failure = err
				return c.failInstanceStart(ctx, tx, cur, err)
			}
		}
		t, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		txNow := tx.Now()
		node = &nodekind.Node{
			ID: id, Workspace: cur.Workspace, Compute: cur.Name, Role: nodekind.NodeRoleInstance,
			Location: loc.Name, Size: size.Name, Family: size.Family, VCPUs: size.VCPUs, GPUs: size.GPUs, MemoryGB: size.MemoryGB, State: nodekind.NodePreparing,
			JoinTokenHash: hash, JoinTokenExpires: txNow.Add(loc.ProvisioningDelay + c.cfg.JoinTimeout),
			CreatedOn: txNow, LastHeartbeat: txNow, PrivateIPAddress: "127.0.0.1", Version: 1,
		}
		token = t
		if err := tx.InsertNode(node); err != nil {
			return err
		}
		return compute.AppendComputeEvent(ctx, tx, cur, "instance_provisioning", fmt.Sprintf("provisioning node %s (%s, %d vCPUs) at %s", id, size.Name, size.VCPUs, loc.Name))
	})
	if err != nil || node == nil || failure != nil {
		return err
	}
	perr, err := provisioning.Provision(ctx, s.Store(), s.Logger(), provisioning.Request{
		Provider: s.Provider(loc), Location: loc, Node: node, JoinToken: token, ServerURL: c.cfg.ServerURL, ServerCA: c.cfg.ServerCA,
		Failed: func(tx store.Tx, n *nodekind.Node, cause error) error {
			if err := tx.DeleteNode(n.ID); err != nil {
				return err
			}
			cur, err := tx.GetCompute(comp.Workspace, comp.Name)
			if err != nil {
				return err
			}
			return c.failInstanceStart(ctx, tx, cur, fmt.Errorf("provider %s: %w", loc.Provider, cause))
		},
	})
	if perr != nil {
		s.Logger().Warn("provisioning an instance failed", slog.String("node", node.ID), slog.Any("err", perr))
	}
	return err
}

// failInstanceStart records a start that cannot be carried out.
func (c *Loop) failInstanceStart(ctx context.Context, tx store.Tx, cur *compute.Compute, cause error) error {
	op := cur.Instance.PendingOperation
	instance.FailStart(cur.Instance, tx.Now(), core.ErrorMessage(cause))
	if err := computes.SaveInstance(tx, cur); err != nil {
		return err
	}
	return compute.AppendComputeEvent(ctx, tx, cur, "instance_start_failed", fmt.Sprintf("%s failed: %s; the instance is %s", op, core.ErrorMessage(cause), cur.Instance.State))
}

// releaseInstanceNodes releases an instance's node and job slots. Jobs
// still running on the slots are preempted: they go back to the queue
// without spending a retry and wait for the instance to run again.
func (c *Loop) releaseInstanceNodes(ctx context.Context, in instance.Input, why string) {
	s := c.s
	for _, n := range in.Slots {
		if n.CurrentAttemptID != "" && n.State != nodekind.NodePreempted {
			if err := s.PreemptNodeBecause(ctx, n.Workspace, n.Compute, n.ID, why); err != nil {
				s.Logger().Warn("stopping an instance's job failed", slog.String("node", n.ID), slog.Any("err", err))
			}
			continue
		}
		if n.CurrentAttemptID == "" {
			c.markLeavingAndRelease(ctx, n, why)
		}
	}
	if n := in.Node; n != nil {
		if err := s.Live().Forget(ctx, n.Workspace, n.Compute, c.cfg.Clock.Now()); err != nil {
			s.Logger().Warn("forgetting an instance's report failed", slog.String("node", n.ID), slog.Any("err", err))
		}
		c.markLeavingAndRelease(ctx, n, why)
	}
}

// markLeavingAndRelease marks a node leaving and releases it.
func (c *Loop) markLeavingAndRelease(ctx context.Context, n *nodekind.Node, why string) {
	s := c.s
	var marked *nodekind.Node
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		marked = nil // a run again starts over
		cur, err := tx.GetNode(n.ID)
		if err != nil {
			return err
		}
		if cur.State == nodekind.NodeLeaving {
			return nil
		}
		cur.State, cur.StateReason, cur.Draining = nodekind.NodeLeaving, why, true
		cur.Version++
		marked = cur
		return tx.UpdateNode(cur)
	})
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		s.Logger().Warn("marking a node leaving failed", slog.String("node", n.ID), slog.Any("err", err))
		return
	}
	if marked != nil {
		n = marked
	}
	s.WakeNodes(n.ID)
	c.release(ctx, n)
}

// deleteInstance removes a deleted instance once its nodes are gone: its
// home (the node's work dir) and files, its system identity, the compute.
func (c *Loop) deleteInstance(ctx context.Context, comp *compute.Compute) error {
	s := c.s
	loc, err := s.Catalog().Location(comp.Location)
	if err == nil {
		if pg, ok := s.Provider(loc).(nodekind.Purger); ok {
			if err := pg.Purge(ctx, &nodekind.Node{ID: compute.InstanceNodeID(comp, loc), Workspace: comp.Workspace, Compute: comp.Name, Location: loc.Name}); err != nil {
				return loop.Context(err, "removing the instance's home")
			}
		}
	}
	if c.cfg.Files != nil {
		if err := c.cfg.Files.RemoveInstanceFiles(comp.Workspace, comp.Name); err != nil {
			s.Logger().Warn("removing an instance's files failed", slog.String("instance", comp.Name), slog.Any("err", err))
		}
	}
	var out service.JobOutcomes
	err = s.Store().Update(ctx, func(tx store.Tx) error {
		out.Reset()
		if err := s.FailQueuedJobs(ctx, tx, comp, &out); err != nil {
			return err
		}
		if err := access.DeleteSystemIdentity(tx, comp); err != nil {
			return err
		}
		if err := s.Live().Delete(tx, comp.Workspace, comp.Name); err != nil {
			return err
		}
		if err := tx.DeleteCompute(comp.Workspace, comp.Name); err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			}
			return err
		}
		return compute.AppendComputeEvent(ctx, tx, comp, core.EventDeleted, "deleted: every process ended, home removed; quota released")
	})
	if err == nil {
		s.Report(&out)
	}
	return err
}

// rememberIdle keeps an instance's idle bookkeeping in memory.
func (c *Loop) rememberIdle(key string, st compute.InstanceStatus) {
	c.s.RememberIdle(key, st)
}

// overlayIdle puts the idle bookkeeping kept in memory over what comp's
// stored state says (which is at most idleWriteEvery older).
func (c *Loop) overlayIdle(comp *compute.Compute) { c.s.OverlayIdle(comp) }

func (c *Loop) idleWriteDue(key string, now time.Time) bool {
	return c.s.IdleWriteDue(key, now)
}

func (c *Loop) idleWritten(key string, now time.Time) { c.s.IdleWritten(key, now) }

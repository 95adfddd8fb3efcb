package computes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/instance"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// Instance operations, as `az ml compute start|stop|restart` and the
// REST API's POST .../start|stop|restart start them: each records the
// operation and its trigger; the lifecycle controller carries it out and
// records how it ended in last_operation.

// StartInstance starts a stopped instance. A start that quota cannot serve
// fails at once and leaves the instance Stopped. Returns ENOTFOUND,
// ECONFLICT (not a stopped instance), EQUOTA.
func (s *Service) StartInstance(ctx context.Context, workspace, name string) (*compute.Compute, error) {
	return s.instanceOp(ctx, workspace, name, func(tx store.Tx, c *compute.Compute) (string, error) {
		if err := s.requestStart(tx, c, compute.TriggerUser); err != nil {
			return "", err
		}
		return "start requested", nil
	})
}

// StopInstance stops a running instance: every process of the instance
// ends; its home is kept. Returns ENOTFOUND, ECONFLICT.
func (s *Service) StopInstance(ctx context.Context, workspace, name string) (*compute.Compute, error) {
	return s.instanceOp(ctx, workspace, name, func(tx store.Tx, c *compute.Compute) (string, error) {
		if err := requestStop(tx, c, compute.OperationStop, compute.TriggerUser); err != nil {
			return "", err
		}
		return "stop requested", nil
	})
}

// RestartInstance stops and starts an instance; it also brings back one
// whose setup failed or whose machine was lost. Returns ENOTFOUND,
// ECONFLICT.
func (s *Service) RestartInstance(ctx context.Context, workspace, name string) (*compute.Compute, error) {
	return s.instanceOp(ctx, workspace, name, func(tx store.Tx, c *compute.Compute) (string, error) {
		st := c.Instance
		switch st.State {
		case compute.InstanceRunning, compute.InstanceSettingUp, compute.InstanceSetupFailed, compute.InstanceUnusable, compute.InstanceCreateFailed:
		default:
			return "", core.Errorf(core.ECONFLICT, "compute instance %q is %s; only a running (or failed) instance can be restarted%s", c.Name, st.State, startHint(c))
		}
		if err := requestStop(tx, c, compute.OperationRestart, compute.TriggerUser); err != nil {
			return "", err
		}
		return "restart requested", nil
	})
}

func startHint(c *compute.Compute) string {
	if c.Instance.State == compute.InstanceStopped {
		return fmt.Sprintf(" (start it: shoal compute start -n %s)", c.Name)
	}
	return ""
}

// requestStart records a start of a stopped instance triggered by trigger.
func (s *Service) requestStart(tx store.Tx, c *compute.Compute, trigger string) error {
	st := c.Instance
	if st.State != compute.InstanceStopped {
		if st.Pending == instance.PendingStart {
			return nil // already starting
		}
		return core.Errorf(core.ECONFLICT, "compute instance %q is %s; only a stopped instance can be started", c.Name, st.State)
	}
	if *c.ReleaseQuotaOnStop {
		if err := s.cfg.Quota.CheckInstanceQuota(tx, c); err != nil {
			return err
		}
	}
	instance.RequestStart(st, trigger, tx.Now())
	return nil
}

// requestStop records a stop (or the stop half of a restart).
func requestStop(tx store.Tx, c *compute.Compute, op, trigger string) error {
	st := c.Instance
	switch st.State {
	case compute.InstanceRunning, compute.InstanceSettingUp, compute.InstanceSetupFailed, compute.InstanceUnusable, compute.InstanceCreateFailed, compute.InstanceStarting, compute.InstanceCreating:
	case compute.InstanceStopping, compute.InstanceRestarting:
		return nil // under way
	case compute.InstanceStopped:
		if op == compute.OperationStop {
			return core.Errorf(core.ECONFLICT, "compute instance %q is already stopped", c.Name)
		}
	default:
		return core.Errorf(core.ECONFLICT, "compute instance %q is %s", c.Name, st.State)
	}
	instance.RequestStop(st, op, trigger, tx.Now())
	return nil
}

// instanceOp loads an instance, applies op and saves it with an event.
func (s *Service) instanceOp(ctx context.Context, workspace, name string, op func(tx store.Tx, c *compute.Compute) (string, error)) (*compute.Compute, error) {
	var out *compute.Compute
	err := s.store.Update(ctx, func(tx store.Tx) error {
		c, err := s.getInstance(tx, workspace, name)
		if err != nil {
			return err
		}
		reason, err := op(tx, c)
		if err != nil {
			return err
		}
		if reason != "" {
			if err := SaveInstance(tx, c); err != nil {
				return err
			}
			if err := compute.AppendComputeEvent(ctx, tx, c, "instance_"+strings.ToLower(c.Instance.LastOperation.OperationName)+"_requested", reason+" by "+identity.ActorName(ctx)); err != nil {
				return err
			}
		}
		out, err = s.withStatus(tx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// getInstance reads a compute that must be an instance.
func (s *Service) getInstance(tx store.Tx, workspace, name string) (*compute.Compute, error) {
	c, err := s.getCompute(tx, workspace, name)
	if err != nil {
		return nil, err
	}
	if !c.IsInstance() || c.Instance == nil {
		return nil, core.Errorf(core.EINVALID, "compute %q is a %s, not a compute instance", c.Name, c.Type)
	}
	if c.ProvisioningState == compute.ProvisioningDeleting {
		return nil, core.Errorf(core.ECONFLICT, "compute instance %q is being deleted", c.Name)
	}
	return c, nil
}

// SaveInstance writes an instance's state. Its version (ETag) stays: the
// state is the server's, and a user's If-Match guards the spec.
func SaveInstance(tx store.Tx, c *compute.Compute) error {
	return tx.UpdateCompute(c)
}

// EnableInstanceSSO turns single sign-on on. Only the instance's user may:
// not its creator, not an administrator (Azure's rule for instances
// created on behalf of someone). Returns ENOTFOUND, EFORBIDDEN.
func (s *Service) EnableInstanceSSO(ctx context.Context, workspace, name string) (*compute.Compute, error) {
	return s.instanceOp(ctx, workspace, name, func(tx store.Tx, c *compute.Compute) (string, error) {
		if identity.ActingPrincipalID(ctx) != c.Instance.AssignedUser {
			return "", core.Errorf(core.EFORBIDDEN, "only the instance's user (%s) may enable single sign-on on %q; its creator cannot", displayPrincipal(c.Instance.AssignedUser), c.Name)
		}
		if c.Instance.SSOEnabled {
			return "", nil
		}
		c.Instance.SSOEnabled = true
		return "single sign-on enabled", nil
	})
}

// DefaultPostpone is how long `postpone-shutdown` delays an idle shutdown.
const DefaultPostpone = 60 * time.Minute

// MaxPostpone is the longest `postpone-shutdown` may delay one.
const MaxPostpone = 7 * 24 * time.Hour

// PostponeShutdown dismisses an upcoming idle shutdown: the idle clock
// starts again and no idle shutdown happens for d. Only the instance's
// user may. Returns ENOTFOUND, EFORBIDDEN, ECONFLICT (not running).
func (s *Service) PostponeShutdown(ctx context.Context, workspace, name string, d time.Duration) (*compute.Compute, error) {
	if d <= 0 {
		d = DefaultPostpone
	}
	if d > MaxPostpone {
		return nil, core.FieldErrorf("minutes", "a shutdown can be postponed by at most 7 days")
	}
	return s.instanceOp(ctx, workspace, name, func(tx store.Tx, c *compute.Compute) (string, error) {
		if err := s.checkInstanceUser(ctx, c); err != nil {
			return "", err
		}
		if !running(c.Instance.State) {
			return "", core.Errorf(core.ECONFLICT, "compute instance %q is %s; there is no shutdown to postpone", c.Name, c.Instance.State)
		}
		now := tx.Now()
		until := now.Add(d)
		c.Instance.ShutdownPostponedUntil = &until
		c.Instance.IdleSince = &now
		c.Instance.ShutdownWarnedAt = nil
		return fmt.Sprintf("idle shutdown postponed until %s", until.Format(time.RFC3339)), nil
	})
}

// CheckInstanceUser is the one answer to "is this viewer the instance's
// user?", for the API's interactive operations and the studio's page alike:
// nil for the instance's user (a workload acting for them included),
// EFORBIDDEN for anyone else or for a compute that is no instance.
func (s *Service) CheckInstanceUser(ctx context.Context, c *compute.Compute) error {
	if c == nil || c.Instance == nil {
		return core.Errorf(core.EFORBIDDEN, "not a compute instance: it has no user")
	}
	return s.checkInstanceUser(ctx, c)
}

// checkInstanceUser refuses anyone but the instance's user: interactive
// use (SSH, notebooks, applications) is theirs alone, administrators and
// workspace Owners included.
func (s *Service) checkInstanceUser(ctx context.Context, c *compute.Compute) error {
	if identity.ActingPrincipalID(ctx) != c.Instance.AssignedUser {
		return core.Errorf(core.EFORBIDDEN, "compute instance %q belongs to %s: only that user may use it interactively (SSH, notebooks, terminals, applications), whatever their role", c.Name, displayPrincipal(c.Instance.AssignedUser))
	}
	return nil
}

package computes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// CreateOrApplyCompute creates a compute or applies spec to the existing one
// of that name, as `az ml compute create -f` does.
func (s *Service) CreateOrApplyCompute(ctx context.Context, workspace string, spec *compute.ComputeSpec, ifMatch string) (*compute.Compute, bool, error) {
	var out *compute.Compute
	var created bool
	// Only the job service makes serverless pools (EnsureServerlessPool).
	spec.Serverless = false
	// The transaction changes spec as it stores it (normalised, its
	// password sealed, identities filled in); a run again
	// (store.Store.Update) starts from the request.
	request, err := spec.Clone()
	if err != nil {
		return nil, false, core.Errorf(core.EINVALID, "%v", err)
	}
	err = s.store.Update(ctx, func(tx store.Tx) error {
		again, err := request.Clone()
		if err != nil {
			return err
		}
		*spec, out, created = *again, nil, false
		ws, err := core.WorkspaceForWrite(tx, workspace)
		if err != nil {
			return err
		}
		loc, size, err := compute.NormalizeComputeSpec(spec, s.catalog, ws.Location)
		if err != nil {
			return err
		}
		existing, err := tx.GetCompute(ws.Name, spec.Name)
		if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		// The admin password is stored only as a salted hash.
		if err := compute.SealAdminPassword(spec, existing, s.cfg.Random); err != nil {
			return err
		}
		if spec.Type == compute.ComputeTypeInstance {
			if err := s.checkInstanceSpec(ctx, tx, ws.Name, spec, existing == nil); err != nil {
				return err
			}
		}
		if err := checkNetwork(loc, spec); err != nil {
			return err
		}
		if err := checkScaleWindows(spec); err != nil {
			return err
		}
		if err := s.cfg.Access.EnsureComputeIdentities(ctx, tx, ws.Name, spec); err != nil {
			return err
		}
		// Each environment a cluster pre-pulls must name an image now;
		// one archived later is skipped (and noted) when a node joins.
		if _, err := compute.ResolvePrepullImages(tx, ws.Name, spec.PrepullImages, s.cfg.CuratedEnvironments); err != nil {
			return err
		}
		if existing == nil {
			if ifMatch != "" && ifMatch != "*" {
				return core.Errorf(core.EPRECONDITION, "compute %q does not exist, so If-Match %s cannot match", spec.Name, ifMatch)
			}
			if spec.Type == compute.ComputeTypeInstance {
				if !spec.Stopped || !*spec.ReleaseQuotaOnStop {
					// The instance holds its quota from the start (a
					// stopped one too, unless release_quota_on_stop).
					probe := &compute.Compute{ComputeSpec: *spec, Workspace: ws.Name}
					if err := s.cfg.Quota.CheckInstanceQuota(tx, probe); err != nil {
						return err
					}
				}
				out, err = s.insertInstance(ctx, tx, ws, spec, loc, size)
			} else {
				out, err = s.insertCompute(ctx, tx, ws, spec, loc, size)
			}
			created = true
			return err
		}
		if err := checkIfMatch(existing, ifMatch); err != nil {
			return err
		}
		if err := checkServerlessChange(existing); err != nil {
			return err
		}
		if spec.Type == compute.ComputeTypeInstance || existing.IsInstance() {
			if !existing.IsInstance() {
				return &core.Error{Code: core.ECONFLICT, Field: "type", Message: fmt.Sprintf("compute %q already exists as a %s; these fields cannot change after creation: type", existing.Name, existing.Type)}
			}
			out, err = s.applyInstance(ctx, tx, existing, spec)
			return err
		}
		out, err = s.applyCompute(ctx, tx, existing, spec)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if created && !out.IsInstance() {
		// A new cluster has no nodes, no jobs, and takes quota only as
		// it grows: nothing for a pass over the other queues to find.
		s.cfg.Changed(compute.ComputeKey(out.Workspace, out.Name))
	} else {
		s.notify()
	}
	return out, created, nil
}

func (s *Service) insertCompute(ctx context.Context, tx store.Tx, ws *core.Workspace, spec *compute.ComputeSpec, loc *catalog.Location, size *catalog.Size) (*compute.Compute, error) {
	now := tx.Now()
	c := &compute.Compute{
		ComputeSpec:        *spec,
		Workspace:          ws.Name,
		Version:            1,
		ProvisioningState:  compute.ProvisioningCreating,
		ProvisioningErrors: []compute.ProvisioningError{},
		CreatedOn:          now,
		ModifiedOn:         now,
		CreatedBy:          identity.ActorName(ctx),
	}
	if err := tx.InsertCompute(c); err != nil {
		return nil, err
	}
	reason := fmt.Sprintf("%s %s on %s capacity at %s (location %q), %d to %d nodes, idle %d s before scale down",
		spec.Type, size.Name, spec.Tier, loc.Name, spec.Location, *spec.MinInstances, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown)
	if err := compute.AppendComputeEvent(ctx, tx, c, core.EventCreated, reason); err != nil {
		return nil, err
	}
	return s.withStatus(tx, c)
}

// applyCompute updates the mutable fields of existing from spec, or fails
// naming the immutable fields that differ.
func (s *Service) applyCompute(ctx context.Context, tx store.Tx, existing *compute.Compute, spec *compute.ComputeSpec) (*compute.Compute, error) {
	if existing.ProvisioningState == compute.ProvisioningDeleting {
		return nil, core.Errorf(core.ECONFLICT, "compute %q is being deleted; wait until it is gone to create it again", existing.Name)
	}
	if diff := compute.ImmutableDifferences(&existing.ComputeSpec, spec); len(diff) > 0 {
		return nil, &core.Error{Code: core.ECONFLICT, Field: diff[0], Message: fmt.Sprintf(
			"compute %q already exists and these fields cannot change after creation: %s; delete it and create it again, or change only min_instances, max_instances, idle_time_before_scale_down, description, tags and identity",
			existing.Name, strings.Join(diff, ", "))}
	}
	if spec.KeepScaleWindows && spec.ScaleWindows == nil {
		spec.ScaleWindows = existing.ScaleWindows
	}
	changes := describeChanges(&existing.ComputeSpec, spec)
	if len(changes) == 0 {
		return s.withStatus(tx, existing)
	}
	next := *existing
	next.MinInstances, next.MaxInstances, next.IdleTimeBeforeScaleDown = spec.MinInstances, spec.MaxInstances, spec.IdleTimeBeforeScaleDown
	next.Description, next.Tags, next.Identity = spec.Description, spec.Tags, spec.Identity
	next.IdlePolicy, next.WaitCostPerHour, next.TierFallback = spec.IdlePolicy, spec.WaitCostPerHour, spec.TierFallback
	next.PrepullImages, next.ScaleWindows = spec.PrepullImages, spec.ScaleWindows
	return s.saveUpdate(ctx, tx, &next, changes)
}

func (s *Service) saveUpdate(ctx context.Context, tx store.Tx, next *compute.Compute, changes []string) (*compute.Compute, error) {
	next.Version++
	next.ModifiedOn = tx.Now()
	if err := tx.UpdateCompute(next); err != nil {
		return nil, err
	}
	if err := compute.AppendComputeEvent(ctx, tx, next, core.EventUpdated, strings.Join(changes, "; ")); err != nil {
		return nil, err
	}
	return s.withStatus(tx, next)
}

// UpdateCompute applies a partial update of mutable fields.
func (s *Service) UpdateCompute(ctx context.Context, workspace, name string, upd *compute.ComputeUpdate, ifMatch string) (*compute.Compute, error) {
	var out *compute.Compute
	err := s.store.Update(ctx, func(tx store.Tx) error {
		existing, err := s.getCompute(tx, workspace, name)
		if err != nil {
			return err
		}
		if err := checkIfMatch(existing, ifMatch); err != nil {
			return err
		}
		if existing.ProvisioningState == compute.ProvisioningDeleting {
			return core.Errorf(core.ECONFLICT, "compute %q is being deleted", existing.Name)
		}
		if err := checkServerlessChange(existing); err != nil {
			return err
		}
		if existing.IsInstance() {
			out, err = s.updateInstance(ctx, tx, existing, upd)
			return err
		}
		if upd.IdleTimeBeforeShutdownMinutes != nil || upd.SSHKeyValue != nil || upd.Schedules != nil || upd.IdleCPUPercentBelow != nil {
			return core.FieldErrorf("idle_time_before_shutdown_minutes", "compute %q is a compute cluster: idle shutdown, schedules and SSH keys set later belong to compute instances", existing.Name)
		}
		next := existing.ComputeSpec
		if upd.MinInstances != nil {
			next.MinInstances = upd.MinInstances
		}
		if upd.MaxInstances != nil {
			next.MaxInstances = upd.MaxInstances
		}
		if upd.IdleTimeBeforeScaleDown != nil {
			next.IdleTimeBeforeScaleDown = upd.IdleTimeBeforeScaleDown
		}
		if upd.IdlePolicy != nil {
			next.IdlePolicy = *upd.IdlePolicy
			if next.IdlePolicy == "fixed" {
				next.IdlePolicy, next.WaitCostPerHour = "", nil
			}
		}
		if upd.WaitCostPerHour != nil {
			next.WaitCostPerHour = upd.WaitCostPerHour
		}
		if upd.Description != nil {
			next.Description = *upd.Description
		}
		if upd.Tags != nil {
			next.Tags = maps.Clone(*upd.Tags)
		}
		if upd.Identity != nil {
			id := *upd.Identity
			next.Identity = &id
		}
		if _, _, err := compute.NormalizeComputeSpec(&next, s.catalog, existing.Location); err != nil {
			return err
		}
		if err := s.cfg.Access.EnsureComputeIdentities(ctx, tx, existing.Workspace, &next); err != nil {
			return err
		}
		changes := describeChanges(&existing.ComputeSpec, &next)
		if len(changes) == 0 {
			out, err = s.withStatus(tx, existing)
			return err
		}
		c := *existing
		c.ComputeSpec = next
		out, err = s.saveUpdate(ctx, tx, &c, changes)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// FindCompute returns one compute with its status.
func (s *Service) FindCompute(ctx context.Context, workspace, name string) (out *compute.Compute, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		c, err := s.getCompute(tx, workspace, name)
		if err != nil {
			return err
		}
		out, err = s.withStatus(tx, c)
		return err
	})
	return out, err
}

// ListComputes returns the workspace's computes with their status.
func (s *Service) ListComputes(ctx context.Context, filter compute.ComputeFilter) (out []*compute.Compute, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(filter.Workspace); err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(filter.Workspace)
			}
			return err
		}
		if filter.Type != "" {
			t, err := compute.NormalizeComputeType(filter.Type)
			if err != nil {
				return err
			}
			filter.Type = t
		}
		list, err := tx.ListComputes(filter)
		if err != nil {
			return err
		}
		out = make([]*compute.Compute, 0, len(list))
		for _, c := range list {
			if c.Serverless && !filter.IncludeServerless {
				continue
			}
			c, err := s.withStatus(tx, c)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// DeleteCompute moves the compute to Deleting; the compute controller removes
// it once its nodes are released.
func (s *Service) DeleteCompute(ctx context.Context, workspace, name, ifMatch string) (*compute.Compute, error) {
	var out *compute.Compute
	err := s.store.Update(ctx, func(tx store.Tx) error {
		c, err := s.getCompute(tx, workspace, name)
		if err != nil {
			return err
		}
		if err := checkIfMatch(c, ifMatch); err != nil {
			return err
		}
		if err := checkServerlessDelete(tx, c); err != nil {
			return err
		}
		if c.ProvisioningState != compute.ProvisioningDeleting {
			c.ProvisioningState = compute.ProvisioningDeleting
			c.Version++
			c.ModifiedOn = tx.Now()
			if err := tx.UpdateCompute(c); err != nil {
				return err
			}
			if err := compute.AppendComputeEvent(ctx, tx, c, core.EventDeleting, "delete requested: draining and releasing nodes"); err != nil {
				return err
			}
		}
		out, err = s.withStatus(tx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.IsInstance() {
		s.notify()
	} else {
		// A cluster being deleted concerns its own queue (its jobs' reasons)
		// and nodes (released); the quota they free asks for the passes of
		// the computes that share it as each is released (control/nodes).
		s.cfg.Changed(compute.ComputeKey(out.Workspace, out.Name))
	}
	return out, nil
}

// ListComputeEvents returns a compute's event log since its creation: a
// compute deleted and created again under its name starts a new log (the
// old one's events stay in the store, for the audit). The log of a
// deleted compute stays readable, whole.
func (s *Service) ListComputeEvents(ctx context.Context, workspace, name string) (out []*core.Event, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(workspace); err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(workspace)
			}
			return err
		}
		filter := core.EventFilter{Workspace: workspace, ResourceType: core.ResourceCompute, ResourceName: name}
		c, gerr := tx.GetCompute(workspace, name)
		if gerr == nil {
			filter.Since = c.CreatedOn
		}
		out, err = tx.ListEvents(filter)
		if err == nil && len(out) == 0 && gerr != nil {
			return gerr
		}
		return err
	})
	return out, err
}

func (s *Service) getCompute(tx store.Tx, workspace, name string) (*compute.Compute, error) {
	if _, err := tx.GetWorkspace(workspace); err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil, core.WorkspaceNotFound(workspace)
		}
		return nil, err
	}
	c, err := tx.GetCompute(workspace, name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "compute %q not found in workspace %q", name, workspace)
	}
	return c, err
}

func checkIfMatch(c *compute.Compute, ifMatch string) error {
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	if strings.TrimPrefix(ifMatch, "W/") != c.ETag {
		return core.Errorf(core.EPRECONDITION, "compute %q has changed (ETag is %s, If-Match was %s); read it again and retry", c.Name, c.ETag, ifMatch)
	}
	return nil
}

// describeChanges lists the mutable fields that differ, as "field old→new".
func describeChanges(old, new *compute.ComputeSpec) []string {
	var out []string
	intChange := func(name string, a, b *int) {
		if *a != *b {
			out = append(out, fmt.Sprintf("%s %d→%d", name, *a, *b))
		}
	}
	intChange("min_instances", old.MinInstances, new.MinInstances)
	intChange("max_instances", old.MaxInstances, new.MaxInstances)
	intChange("idle_time_before_scale_down", old.IdleTimeBeforeScaleDown, new.IdleTimeBeforeScaleDown)
	if old.IdlePolicy != new.IdlePolicy {
		out = append(out, fmt.Sprintf("idle policy %s→%s", orFixed(old.IdlePolicy), orFixed(new.IdlePolicy)))
	}
	if fmt.Sprint(deref(old.WaitCostPerHour)) != fmt.Sprint(deref(new.WaitCostPerHour)) {
		out = append(out, "wait_cost_per_hour changed")
	}
	if old.TierFallback.Duration() != new.TierFallback.Duration() || (old.TierFallback == nil) != (new.TierFallback == nil) {
		out = append(out, "tier_fallback changed")
	}
	if old.Description != new.Description {
		out = append(out, "description changed")
	}
	if !maps.Equal(old.Tags, new.Tags) {
		out = append(out, "tags changed")
	}
	if !slices.Equal(old.PrepullImages, new.PrepullImages) {
		out = append(out, fmt.Sprintf("prepull_images [%s]→[%s] (nodes that join from now on)", strings.Join(old.PrepullImages, ", "), strings.Join(new.PrepullImages, ", ")))
	}
	if identityKey(old.Identity) != identityKey(new.Identity) {
		out = append(out, fmt.Sprintf("identity %s→%s", identityType(old.Identity), identityType(new.Identity)))
	}
	if w := scaleWindowsChange(old.ScaleWindows, new.ScaleWindows); w != "" {
		out = append(out, w)
	}
	return out
}

func identityType(id *compute.IdentitySpec) string {
	if id == nil {
		return compute.IdentityNone
	}
	return id.Type
}

func identityKey(id *compute.IdentitySpec) string {
	if id == nil {
		return compute.IdentityNone
	}
	k := id.Type
	for _, u := range id.UserAssignedIdentities {
		k += "|" + strings.ToLower(u.ResourceID)
	}
	return k
}

func orFixed(p string) string {
	if p == "" {
		return "fixed"
	}
	return p
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

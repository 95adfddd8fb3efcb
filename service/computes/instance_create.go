package computes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/decide/instance"
	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// InstancePolicy is what a server (or workspace) imposes on compute
// instances, as an Azure Policy would: a default shutdown schedule for
// instances created without one, and a cap on the idle time.
type InstancePolicy struct {
	// DefaultSchedules are added to an instance created without schedules.
	DefaultSchedules *compute.ComputeSchedules
	// DefaultIdleMinutes is set on an instance created without idle
	// shutdown (0: none).
	DefaultIdleMinutes int
	// MaxIdleMinutes caps idle_time_before_shutdown_minutes (0: no cap).
	MaxIdleMinutes int
}

// checkInstanceSpec applies the server's instance policy and checks what
// needs other resources: the assigned user (and, at creation, what its
// creator may set for them), the schedules' expressions and time zones,
// and the name's uniqueness across the location.
func (s *Service) checkInstanceSpec(ctx context.Context, tx store.Tx, ws string, spec *compute.ComputeSpec, creating bool) error {
	if loc, err := s.catalog.Location(spec.Location); err == nil && creating {
		if err := checkInstanceIsolation(tx, loc, spec); err != nil {
			return err
		}
	}
	pol := s.cfg.InstancePolicy
	if creating && spec.Schedules == nil && pol.DefaultSchedules != nil && len(pol.DefaultSchedules.ComputeStartStop) > 0 {
		def := cloneSchedules(pol.DefaultSchedules)
		spec.Schedules = def
	}
	if creating && spec.IdleTimeBeforeShutdownMinutes == nil && pol.DefaultIdleMinutes > 0 {
		m := pol.DefaultIdleMinutes
		spec.IdleTimeBeforeShutdownMinutes = &m
	}
	if m := spec.IdleTimeBeforeShutdownMinutes; m != nil && pol.MaxIdleMinutes > 0 && *m > pol.MaxIdleMinutes {
		return core.FieldErrorf("idle_time_before_shutdown_minutes", "%d is above this server's policy: at most %d minutes", *m, pol.MaxIdleMinutes)
	}
	if err := compute.NormalizeSchedules(spec.Schedules); err != nil {
		return err
	}
	if err := schedule.Validate(spec.Schedules); err != nil {
		return err
	}
	if err := s.checkAppTargets(spec); err != nil {
		return err
	}
	if c := spec.CreateOnBehalfOf; c != nil {
		u, err := tx.GetUser(c.UserObjectID)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.FieldErrorf("create_on_behalf_of.user_object_id", "no user %q on this server (on Shoal the object ID is the user's name; see `shoal user list`)", c.UserObjectID)
		} else if err != nil {
			return err
		}
		if u.Disabled {
			return core.FieldErrorf("create_on_behalf_of.user_object_id", "user %q is disabled", u.Name)
		}
		c.UserObjectID = u.Name
	}
	if !creating {
		return nil
	}
	if err := s.checkOnBehalfOf(ctx, tx, ws, spec); err != nil {
		return err
	}
	// Instance names are unique across the location (Azure: "unique across
	// the region"), whatever the workspace.
	loc, err := s.catalog.Location(spec.Location)
	if err != nil {
		return err
	}
	list, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true, Type: compute.ComputeTypeInstance})
	if err != nil {
		return err
	}
	for _, c := range list {
		if !strings.EqualFold(c.Name, spec.Name) || strings.EqualFold(c.Workspace, ws) {
			continue
		}
		if other, err := s.catalog.Location(c.Location); err == nil && other.Name == loc.Name {
			where, err := workspaceShownTo(ctx, tx, c.Workspace)
			if err != nil {
				return err
			}
			return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
				"name: a compute instance named %q already exists in location %s (%s); instance names are unique across a location", c.Name, loc.Name, where)}
		}
	}
	return nil
}

// workspaceShownTo names workspace ws as the caller may see it: by name
// to an administrator, the server itself or a principal holding a role
// there; as "another workspace" to anyone else, since a workspace's name
// is its team's to share.
func workspaceShownTo(ctx context.Context, tx store.Tx, ws string) (string, error) {
	p := identity.PrincipalFrom(ctx)
	if p == nil || p.Admin {
		return "workspace " + ws, nil
	}
	roles, err := tx.ListRoleAssignments(p.ID, ws)
	if err != nil {
		return "", err
	}
	if len(roles) > 0 {
		return "workspace " + ws, nil
	}
	return "in another workspace", nil
}

func cloneSchedules(in *compute.ComputeSchedules) *compute.ComputeSchedules {
	out := &compute.ComputeSchedules{}
	for _, sc := range in.ComputeStartStop {
		c := *sc
		if sc.Trigger != nil {
			t := *sc.Trigger
			if sc.Trigger.Schedule != nil {
				p := *sc.Trigger.Schedule
				t.Schedule = &p
			}
			c.Trigger = &t
		}
		out.ComputeStartStop = append(out.ComputeStartStop, &c)
	}
	return out
}

// insertInstance stores a new instance. It is Creating with a start under
// way (or Stopped, when created stopped), belongs to its creator or to the
// user it was created on behalf of, and gets the secret the server's proxy
// uses with its notebook.
func (s *Service) insertInstance(ctx context.Context, tx store.Tx, ws *core.Workspace, spec *compute.ComputeSpec, loc *catalog.Location, size *catalog.Size) (*compute.Compute, error) {
	now := tx.Now()
	owner := identity.ActingPrincipalID(ctx)
	if spec.CreateOnBehalfOf != nil {
		owner = "user:" + spec.CreateOnBehalfOf.UserObjectID
	}
	if owner == "" {
		return nil, core.Errorf(core.EINVALID, "a compute instance needs a user: create it as a user, or name one in create_on_behalf_of")
	}
	if err := checkAppRuntime(tx, spec, loc); err != nil {
		return nil, err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	st := &compute.InstanceStatus{AssignedUser: owner, NotebookToken: hex.EncodeToString(tok)}
	// Azure: created on behalf of someone, with a setup script or custom
	// application, SSO stays off until that user turns it on.
	st.SSOEnabled = *spec.EnableSSO
	if owner != identity.ActingPrincipalID(ctx) && (spec.SetupScripts != nil || len(spec.CustomApplications) > 0) {
		st.SSOEnabled = false
	}
	stopped := spec.Stopped
	spec.Stopped = false
	if stopped {
		st.State = compute.InstanceStopped
		st.LastOperation = &compute.LastOperation{OperationName: compute.OperationCreate, OperationTime: now, OperationStatus: compute.OperationSucceeded, OperationTrigger: compute.TriggerUser}
	} else {
		st.State = compute.InstanceCreating
		st.Pending, st.PendingOperation, st.PendingTrigger = instance.PendingStart, compute.OperationCreate, compute.TriggerUser
		st.LastOperation = &compute.LastOperation{OperationName: compute.OperationCreate, OperationTime: now, OperationStatus: compute.OperationInProgress, OperationTrigger: compute.TriggerUser}
	}
	c := &compute.Compute{
		ComputeSpec: *spec, Workspace: ws.Name, Version: 1,
		ProvisioningState: compute.ProvisioningCreating, ProvisioningErrors: []compute.ProvisioningError{},
		CreatedOn: now, ModifiedOn: now, CreatedBy: identity.ActorName(ctx), Instance: st,
	}
	if err := tx.InsertCompute(c); err != nil {
		return nil, err
	}
	reason := fmt.Sprintf("compute instance %s (%d vCPUs) at %s for %s; SSH %s; idle shutdown %s; %d schedule(s)",
		size.Name, size.VCPUs, loc.Name, displayPrincipal(owner), onOff(*spec.SSHPublicAccessEnabled), idleText(spec.IdleTimeBeforeShutdownMinutes), scheduleCount(spec))
	if stopped {
		reason += "; created stopped"
	}
	if err := compute.AppendComputeEvent(ctx, tx, c, core.EventCreated, reason); err != nil {
		return nil, err
	}
	return s.withStatus(tx, c)
}

// applyInstance applies a re-submitted instance document: only the
// mutable fields may differ.
func (s *Service) applyInstance(ctx context.Context, tx store.Tx, existing *compute.Compute, spec *compute.ComputeSpec) (*compute.Compute, error) {
	if existing.ProvisioningState == compute.ProvisioningDeleting {
		return nil, core.Errorf(core.ECONFLICT, "compute %q is being deleted; wait until it is gone to create it again", existing.Name)
	}
	if !existing.IsInstance() {
		return nil, &core.Error{Code: core.ECONFLICT, Field: "type", Message: fmt.Sprintf("compute %q already exists as a %s; these fields cannot change after creation: type", existing.Name, existing.Type)}
	}
	spec.Stopped = false
	if diff := compute.InstanceImmutableDifferences(&existing.ComputeSpec, spec); len(diff) > 0 {
		return nil, &core.Error{Code: core.ECONFLICT, Field: diff[0], Message: fmt.Sprintf(
			"compute instance %q already exists and these fields cannot change after creation: %s; delete it and create it again, or change only description, tags, identity, idle_time_before_shutdown_minutes, schedules and the SSH key",
			existing.Name, strings.Join(diff, ", "))}
	}
	upd := &compute.ComputeUpdate{
		Description: &spec.Description, Tags: &spec.Tags, Identity: spec.Identity,
		IdleTimeBeforeShutdownMinutes: spec.IdleTimeBeforeShutdownMinutes, Schedules: spec.Schedules,
		IdleCPUPercentBelow: spec.IdleCPUPercentBelow,
	}
	if spec.Identity == nil {
		upd.Identity = &compute.IdentitySpec{Type: compute.IdentityNone}
	}
	if spec.Schedules == nil {
		upd.Schedules = &compute.ComputeSchedules{}
	}
	if spec.SSHSettings != nil && spec.SSHSettings.SSHKeyValue != "" {
		k := spec.SSHSettings.SSHKeyValue
		upd.SSHKeyValue = &k
	}
	return s.updateInstance(ctx, tx, existing, upd)
}

// updateInstance applies a partial update to an instance.
func (s *Service) updateInstance(ctx context.Context, tx store.Tx, existing *compute.Compute, upd *compute.ComputeUpdate) (*compute.Compute, error) {
	if upd.MinInstances != nil || upd.MaxInstances != nil || upd.IdleTimeBeforeScaleDown != nil {
		return nil, core.FieldErrorf("min_instances", "compute %q is a compute instance: it has no min_instances, max_instances or idle_time_before_scale_down (see idle_time_before_shutdown_minutes)", existing.Name)
	}
	next := existing.ComputeSpec
	st := *existing.Instance
	var changes []string
	if upd.Description != nil && *upd.Description != next.Description {
		next.Description = *upd.Description
		changes = append(changes, "description changed")
	}
	if upd.Tags != nil && !maps.Equal(*upd.Tags, next.Tags) {
		next.Tags = maps.Clone(*upd.Tags)
		changes = append(changes, "tags changed")
	}
	if upd.Identity != nil {
		id := *upd.Identity
		if id.Type == compute.IdentityNone && len(id.UserAssignedIdentities) == 0 {
			next.Identity = nil
		} else {
			next.Identity = &id
		}
	}
	if upd.IdleCPUPercentBelow != nil {
		v := *upd.IdleCPUPercentBelow
		next.IdleCPUPercentBelow = &v
		if v == 0 {
			next.IdleCPUPercentBelow = nil
		}
	}
	if m := upd.IdleTimeBeforeShutdownMinutes; m != nil {
		old := 0
		if next.IdleTimeBeforeShutdownMinutes != nil {
			old = *next.IdleTimeBeforeShutdownMinutes
		}
		if *m != old {
			v := *m
			next.IdleTimeBeforeShutdownMinutes = &v
			changes = append(changes, fmt.Sprintf("idle_time_before_shutdown_minutes %s→%d", idleText(&old), v))
			s.onIdleMinutesChanged(tx, &st, v)
		}
	}
	if upd.Schedules != nil {
		sc := upd.Schedules
		if len(sc.ComputeStartStop) == 0 {
			sc = nil
		}
		if JSONEqual(sc, next.Schedules) == false {
			next.Schedules = sc
			changes = append(changes, fmt.Sprintf("schedules: %d", scheduleCount(&next)))
		}
	}
	if k := upd.SSHKeyValue; k != nil && strings.TrimSpace(*k) != sshKeyOf(next.SSHSettings) {
		if !*next.SSHPublicAccessEnabled {
			return nil, core.FieldErrorf("ssh_settings.ssh_key_value", "SSH is disabled on compute instance %q (ssh_public_access_enabled was false at creation) and cannot be enabled after creation", existing.Name)
		}
		if identity.ActingPrincipalID(ctx) != st.AssignedUser {
			return nil, &core.Error{Code: core.EFORBIDDEN, Field: "ssh_settings.ssh_key_value", Message: fmt.Sprintf(
				"only the instance's user (%s) may set its SSH key", displayPrincipal(st.AssignedUser))}
		}
		if err := compute.ValidateSSHPublicKey("ssh_settings.ssh_key_value", *k); err != nil {
			return nil, err
		}
		next.SSHSettings = &compute.SSHSettings{SSHKeyValue: strings.TrimSpace(*k)}
		changes = append(changes, "SSH key set")
	}
	if _, _, err := compute.NormalizeInstanceSpec(&next, s.catalog, existing.Location); err != nil {
		return nil, err
	}
	if err := s.checkInstanceSpec(ctx, tx, existing.Workspace, &next, false); err != nil {
		return nil, err
	}
	if err := s.cfg.Access.EnsureComputeIdentities(ctx, tx, existing.Workspace, &next); err != nil {
		return nil, err
	}
	if identityKey(existing.Identity) != identityKey(next.Identity) {
		changes = append(changes, fmt.Sprintf("identity %s→%s", identityType(existing.Identity), identityType(next.Identity)))
	}
	if len(changes) == 0 && JSONEqual(existing.IdleCPUPercentBelow, next.IdleCPUPercentBelow) {
		return s.withStatus(tx, existing)
	}
	c := *existing
	c.ComputeSpec = next
	c.Instance = &st
	if len(changes) == 0 {
		changes = append(changes, "idle_cpu_percent_below changed")
	}
	return s.saveUpdate(ctx, tx, &c, changes)
}

func sshKeyOf(s *compute.SSHSettings) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(s.SSHKeyValue)
}

// displayPrincipal shows a principal ID as a name ("user:alice" → alice).
func displayPrincipal(id string) string { return strings.TrimPrefix(id, "user:") }

func onOff(b bool) string {
	if b {
		return "enabled"
	}
	return "disabled"
}

func idleText(m *int) string {
	if m == nil || *m == 0 {
		return "off"
	}
	return fmt.Sprintf("%d min", *m)
}

func scheduleCount(spec *compute.ComputeSpec) int {
	if spec.Schedules == nil {
		return 0
	}
	return len(spec.Schedules.ComputeStartStop)
}

// checkAppTargets refuses a custom application whose target is this
// server's own port (its listen, public or applications URL's): the
// application proxy dials targets on the server's host, and would reach
// the server itself.
// Any other port that is not the instance's is refused by the proxy at
// each request, since what listens there can change.
func (s *Service) checkAppTargets(spec *compute.ComputeSpec) error {
	reserved := map[int]bool{}
	for _, raw := range []string{s.cfg.ServerURL, s.cfg.PublicURL, s.cfg.AppsURL} {
		if p := urlPort(raw); p > 0 {
			reserved[p] = true
		}
	}
	for i, a := range spec.CustomApplications {
		if a == nil {
			continue
		}
		for j, e := range a.Endpoints {
			if e != nil && reserved[e.Target] {
				return core.FieldErrorf(fmt.Sprintf("custom_applications[%d].endpoints[%d].target", i, j), "port %d is reserved: it is this Shoal server's own port; an application listens on a port of its own", e.Target)
			}
		}
	}
	return nil
}

// urlPort is the port of an http(s) URL, explicit or implied; 0 when raw
// is not one.
func urlPort(raw string) int {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

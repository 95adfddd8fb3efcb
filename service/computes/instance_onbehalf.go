package computes

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// checkOnBehalfOf guards an instance created for another user. Its shells,
// notebook, setup scripts and custom applications run as the assigned
// user's OS account, and its SSH key logs in as that account, so a
// creator who could choose them would run code as someone else: the
// assigned user must belong to the workspace (hold a role there, or be an
// administrator), and only an administrator may create an instance for
// someone else with setup scripts, custom applications or an SSH key.
// Called at creation only: these fields cannot change afterwards (the SSH
// key only by the instance's own user).
func (s *Service) checkOnBehalfOf(ctx context.Context, tx store.Tx, ws string, spec *compute.ComputeSpec) error {
	c := spec.CreateOnBehalfOf
	if c == nil {
		return nil
	}
	u, err := tx.GetUser(c.UserObjectID)
	if err != nil {
		return err // checkInstanceSpec already named a missing user
	}
	if !u.Admin {
		roles, err := tx.ListRoleAssignments(u.PrincipalID(), ws)
		if err != nil {
			return err
		}
		if len(roles) == 0 {
			return core.FieldErrorf("create_on_behalf_of.user_object_id",
				"user %q holds no role in workspace %s: an instance is created only for a member of its workspace (an Owner assigns one with `shoal role assign -w %s --user %s --role Reader`)", u.Name, ws, ws, u.Name)
		}
	}
	p := identity.PrincipalFrom(ctx)
	if identity.ActingPrincipalID(ctx) == u.PrincipalID() || (p != nil && p.Admin) {
		return nil
	}
	refuse := func(field string) error {
		return &core.Error{Code: core.EFORBIDDEN, Field: field, Message: fmt.Sprintf(
			"%s: they would run as %s's account; only an administrator may set them for another user (%s may add them to an instance of their own)",
			field, u.Name, u.Name)}
	}
	if spec.SetupScripts != nil && (spec.SetupScripts.CreationScript != nil || spec.SetupScripts.StartupScript != nil) {
		return refuse("setup_scripts")
	}
	if len(spec.CustomApplications) > 0 {
		return refuse("custom_applications")
	}
	if k := spec.SSHSettings; k != nil && strings.TrimSpace(k.SSHKeyValue) != "" {
		return &core.Error{Code: core.EFORBIDDEN, Field: "ssh_settings.ssh_key_value", Message: fmt.Sprintf(
			"ssh_settings.ssh_key_value: it would log in as %s's account (azureuser); only an administrator may set it for another user; %s sets their own SSH key later with `shoal compute update --name %s --ssh-key-value @~/.ssh/id_ed25519.pub`",
			u.Name, u.Name, spec.Name)}
	}
	return nil
}

package access

import (
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// DeleteSystemIdentity removes a deleted compute's system-assigned identity
// and its role assignments, as Azure deletes it with the compute: a new
// compute of the same name must not inherit its rights.
func DeleteSystemIdentity(tx store.Tx, c *compute.Compute) error {
	name := SystemIdentityName(c.Workspace, c.Name)
	id, err := tx.GetIdentity(name)
	if core.ErrorCode(err) == core.ENOTFOUND || (err == nil && !id.System) {
		return nil
	} else if err != nil {
		return err
	}
	list, err := tx.ListRoleAssignments(id.PrincipalID(), "")
	if err != nil {
		return err
	}
	for _, a := range list {
		if err := tx.DeleteRoleAssignment(a.ID); err != nil {
			return err
		}
	}
	return tx.DeleteIdentity(id.Name)
}

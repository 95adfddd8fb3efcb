package armcompute

import (
	"encoding/json"
	"time"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// instanceSpec reads a ComputeInstance's properties into spec.
func instanceSpec(spec *compute.ComputeSpec, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var p InstanceProperties
	if err := json.Unmarshal(raw, &p); err != nil {
		return core.FieldErrorf("properties.properties", "%v", err)
	}
	if len(p.Schedules) > 0 && string(p.Schedules) != "null" {
		s, err := schedulesFrom(p.Schedules)
		if err != nil {
			return err
		}
		spec.Schedules = s
	}
	if len(p.SetupScripts) > 0 && string(p.SetupScripts) != "null" {
		s, err := setupScriptsFrom(p.SetupScripts)
		if err != nil {
			return err
		}
		spec.SetupScripts = s
	}
	if len(p.CustomServices) > 0 && string(p.CustomServices) != "null" && string(p.CustomServices) != "[]" {
		// Refused rather than dropped: a PUT must not half apply.
		return core.FieldErrorf("properties.properties.customServices", "set custom applications with `shoal compute create -f` (custom_applications); this API does not take them")
	}
	spec.Size = p.VMSize
	if s := p.SSHSettings; s != nil {
		switch s.SSHPublicAccess {
		case "Enabled":
			t := true
			spec.SSHPublicAccessEnabled = &t
		case "Disabled", "":
			f := false
			spec.SSHPublicAccessEnabled = &f
		default:
			return core.FieldErrorf("properties.properties.sshSettings.sshPublicAccess", "%q is not Enabled or Disabled", s.SSHPublicAccess)
		}
		if s.AdminPublicKey != "" {
			spec.SSHSettings = &compute.SSHSettings{SSHKeyValue: s.AdminPublicKey}
		}
	}
	if pc := p.PersonalComputeInstanceSettings; pc != nil && pc.AssignedUser != nil {
		spec.CreateOnBehalfOf = &compute.CreateOnBehalfOf{UserObjectID: pc.AssignedUser.ObjectID, UserTenantID: pc.AssignedUser.TenantID}
	}
	if p.IdleTimeBeforeShutdown != "" {
		d, err := armcore.ParseDuration(p.IdleTimeBeforeShutdown)
		if err != nil {
			return core.FieldErrorf("properties.properties.idleTimeBeforeShutdown", "%v", err)
		}
		m := int(d / time.Minute)
		spec.IdleTimeBeforeShutdownMinutes = &m
	}
	spec.EnableSSO, spec.EnableRootAccess, spec.ReleaseQuotaOnStop = p.EnableSSO, p.EnableRootAccess, p.ReleaseQuotaOnStop
	return nil
}

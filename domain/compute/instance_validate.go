package compute

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// Defaults of an instance spec.
const (
	DefaultInstanceSize = "Standard_DS3_v2"
	// MaxInstanceJobs bounds max_concurrent_jobs.
	MaxInstanceJobs = 64
)

var (
	appNameRE = core.LazyRegexp(`^[a-z][a-z0-9-]{0,31}$`)
	envNameRE = core.LazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// NormalizeInstanceSpec applies defaults to a compute instance spec, puts
// enumerations in their canonical spelling and checks every rule that
// needs no other resource (the assigned user's existence, identities and
// the cron expressions are checked by the service). It returns the
// resolved location and size.
func NormalizeInstanceSpec(spec *ComputeSpec, cat *catalog.Catalog, defaultLocation string) (*catalog.Location, *catalog.Size, error) {
	if err := ValidateComputeName(spec.Name); err != nil {
		return nil, nil, err
	}
	spec.Type = ComputeTypeInstance
	loc, size, err := resolvePlacement(spec, cat, defaultLocation, DefaultInstanceSize)
	if err != nil {
		return nil, nil, err
	}
	rootAsked := spec.EnableRootAccess != nil && *spec.EnableRootAccess
	for _, b := range []struct {
		p   **bool
		def bool
	}{{&spec.SSHPublicAccessEnabled, false}, {&spec.EnableNodePublicIP, true}, {&spec.EnableSSO, true},
		{&spec.EnableRootAccess, InstanceIsolationAt(loc) == IsolationContainer}, {&spec.ReleaseQuotaOnStop, false}, {&spec.EnableOSPatching, false}} {
		if *b.p == nil {
			v := b.def
			*b.p = &v
		}
	}
	if err := validateRootAccess(spec, loc, rootAsked); err != nil {
		return nil, nil, err
	}
	if err := validateInstanceImage(spec, loc); err != nil {
		return nil, nil, err
	}
	if err := validateInstanceSSH(spec); err != nil {
		return nil, nil, err
	}
	if m := spec.IdleTimeBeforeShutdownMinutes; m != nil {
		if err := ValidateIdleShutdownMinutes(*m); err != nil {
			return nil, nil, err
		}
	}
	if p := spec.IdleCPUPercentBelow; p != nil && (*p <= 0 || *p > 100) {
		return nil, nil, core.FieldErrorf("idle_cpu_percent_below", "must be more than 0 and at most 100 (percent of the instance's CPUs), got %g", *p)
	}
	if spec.MaxConcurrentJobs == nil {
		n := size.VCPUs
		spec.MaxConcurrentJobs = &n
	} else if n := *spec.MaxConcurrentJobs; n < 1 || n > MaxInstanceJobs {
		return nil, nil, core.FieldErrorf("max_concurrent_jobs", "must be between 1 and %d, got %d", MaxInstanceJobs, n)
	}
	if c := spec.CreateOnBehalfOf; c != nil {
		c.UserObjectID = strings.TrimSpace(c.UserObjectID)
		if c.UserObjectID == "" {
			return nil, nil, core.FieldErrorf("create_on_behalf_of.user_object_id", "is required: the user the instance is for (on Shoal, the user's name)")
		}
	}
	if err := NormalizeSchedules(spec.Schedules); err != nil {
		return nil, nil, err
	}
	if spec.Schedules != nil && len(spec.Schedules.ComputeStartStop) == 0 {
		spec.Schedules = nil
	}
	if err := validateSetupScripts(spec.SetupScripts); err != nil {
		return nil, nil, err
	}
	if err := validateCustomApps(spec.CustomApplications, loc); err != nil {
		return nil, nil, err
	}
	// An empty list and an absent one mean the same: keep one spelling, so
	// that what the server returns (which omits an empty list) applies again
	// with the same immutable fields.
	if len(spec.CustomApplications) == 0 {
		spec.CustomApplications = nil
	}
	if n := spec.NetworkSettings; n != nil && n.VnetName == "" && n.Subnet == "" {
		spec.NetworkSettings = nil
	}
	if err := validatePublicIP(spec); err != nil {
		return nil, nil, err
	}
	if err := normalizeIdentity(spec.Identity); err != nil {
		return nil, nil, err
	}
	if err := core.ValidateTags(spec.Tags); err != nil {
		return nil, nil, err
	}
	if err := validateComputeDescription(spec.Description); err != nil {
		return nil, nil, err
	}
	return loc, size, nil
}

// ValidateIdleShutdownMinutes checks idle_time_before_shutdown_minutes:
// 15 minutes to 3 days, as on Azure.
func ValidateIdleShutdownMinutes(m int) error {
	if m < MinIdleShutdownMinutes || m > MaxIdleShutdownMinutes {
		return core.FieldErrorf("idle_time_before_shutdown_minutes", "must be between %d and %d minutes (15 minutes to 3 days), got %d", MinIdleShutdownMinutes, MaxIdleShutdownMinutes, m)
	}
	return nil
}

// validateInstanceSSH checks an instance's SSH settings: the login is
// always azureuser (read-only), a key needs SSH enabled, and the key must
// be a public key in a form Azure accepts.
func validateInstanceSSH(spec *ComputeSpec) error {
	s := spec.SSHSettings
	if s == nil {
		return nil
	}
	s.SSHPort, s.HostKey = 0, "" // read-only
	if s.AdminUsername != "" && s.AdminUsername != InstanceAdminUsername {
		return core.FieldErrorf("ssh_settings.admin_username", "is read-only on a compute instance: the login is always %s", InstanceAdminUsername)
	}
	s.AdminUsername = ""
	s.SSHKeyValue = strings.TrimSpace(s.SSHKeyValue)
	if s.SSHKeyValue == "" {
		if s.AdminPassword == "" {
			spec.SSHSettings = nil
		}
		return nil
	}
	if !*spec.SSHPublicAccessEnabled {
		return core.FieldErrorf("ssh_settings.ssh_key_value", "SSH is disabled on this instance (ssh_public_access_enabled is false), and cannot be enabled after creation")
	}
	return ValidateSSHPublicKey("ssh_settings.ssh_key_value", s.SSHKeyValue)
}

// ValidateSSHPublicKey checks that key is an SSH public key in the
// single-line OpenSSH form or a multi-line PEM/RFC 4716 form.
func ValidateSSHPublicKey(field, key string) error {
	key = strings.TrimSpace(key)
	for _, p := range sshKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return nil
		}
	}
	if strings.HasPrefix(key, "-----BEGIN") && strings.Contains(key, "PRIVATE KEY") {
		return core.FieldErrorf(field, "is a private key: give the public key (e.g. the .pub file ssh-keygen wrote)")
	}
	return core.FieldErrorf(field, "must be an SSH public key in the single-line OpenSSH format (starting with ssh-rsa, ssh-ed25519 or ecdsa-sha2-...) or the multi-line PEM format")
}

// NormalizeSchedules checks the shape of an instance's schedules and puts
// action, state and trigger type in canonical spelling. The trigger's
// expression, times and time zone are checked by instance/schedule.
func NormalizeSchedules(s *ComputeSchedules) error {
	if s == nil {
		return nil
	}
	if n := len(s.ComputeStartStop); n > MaxInstanceSchedules {
		return core.FieldErrorf("schedules.compute_start_stop", "at most %d schedules are allowed per compute instance, got %d", MaxInstanceSchedules, n)
	}
	for i, sc := range s.ComputeStartStop {
		f := fmt.Sprintf("schedules.compute_start_stop[%d]", i)
		if sc == nil {
			return core.FieldErrorf(f, "must be a schedule with action and trigger")
		}
		switch strings.ToLower(strings.TrimSpace(sc.Action)) {
		case ScheduleActionStart:
			sc.Action = ScheduleActionStart
		case ScheduleActionStop:
			sc.Action = ScheduleActionStop
		case "":
			return core.FieldErrorf(f+".action", "is required: start or stop")
		default:
			return core.FieldErrorf(f+".action", "must be start or stop, got %q", sc.Action)
		}
		switch strings.ToLower(strings.TrimSpace(sc.State)) {
		case "", ScheduleEnabled:
			sc.State = ScheduleEnabled
		case ScheduleDisabled:
			sc.State = ScheduleDisabled
		default:
			return core.FieldErrorf(f+".state", "must be enabled or disabled, got %q", sc.State)
		}
		if sc.Trigger == nil {
			return core.FieldErrorf(f+".trigger", "is required: a cron or recurrence trigger")
		}
		switch strings.ToLower(strings.TrimSpace(sc.Trigger.Type)) {
		case TriggerCron:
			sc.Trigger.Type = TriggerCron
			if strings.TrimSpace(sc.Trigger.Expression) == "" {
				return core.FieldErrorf(f+".trigger.expression", "is required for a cron trigger (five fields: minute hour day-of-month month day-of-week)")
			}
		case TriggerRecurrence:
			sc.Trigger.Type = TriggerRecurrence
			if strings.TrimSpace(sc.Trigger.Frequency) == "" {
				return core.FieldErrorf(f+".trigger.frequency", "is required for a recurrence trigger: minute, hour, day, week or month")
			}
		case "":
			return core.FieldErrorf(f+".trigger.type", "is required: cron or recurrence")
		default:
			return core.FieldErrorf(f+".trigger.type", "must be cron or recurrence, got %q", sc.Trigger.Type)
		}
	}
	return nil
}

// validateSetupScripts checks the setup scripts: each a path or a command,
// with a timeout of 1 minute to a day.
func validateSetupScripts(s *SetupScripts) error {
	if s == nil {
		return nil
	}
	for _, x := range []struct {
		field string
		sc    *SetupScript
	}{{"setup_scripts.creation_script", s.CreationScript}, {"setup_scripts.startup_script", s.StartupScript}} {
		sc := x.sc
		if sc == nil {
			continue
		}
		sc.Path, sc.Command = strings.TrimSpace(sc.Path), strings.TrimSpace(sc.Command)
		switch {
		case sc.Path == "" && sc.Command == "":
			return core.FieldErrorf(x.field, "needs a path (a script in the instance's home) or a command")
		case sc.Path != "" && sc.Command != "":
			return core.FieldErrorf(x.field, "give either path or command, not both")
		}
		if sc.TimeoutMinutes != nil && (*sc.TimeoutMinutes < 1 || *sc.TimeoutMinutes > 1440) {
			return core.FieldErrorf(x.field+".timeout_minutes", "must be between 1 and 1440 minutes, got %d", *sc.TimeoutMinutes)
		}
	}
	return nil
}

// ReservedSSHPort is SSH's port, which no custom application may target:
// the application proxy would reach the host's SSH server.
const ReservedSSHPort = 22

// validateCustomApps checks custom applications: each has an image (run
// in a container beside the instance) or a command (run on the host), its
// endpoints, environment and bind mounts.
func validateCustomApps(apps []*CustomApplication, loc *catalog.Location) error {
	if len(apps) > MaxCustomApplications {
		return core.FieldErrorf("custom_applications", "at most %d custom applications are allowed, got %d", MaxCustomApplications, len(apps))
	}
	names, published := map[string]bool{}, map[int]string{}
	for i, a := range apps {
		f := fmt.Sprintf("custom_applications[%d]", i)
		if a == nil {
			return core.FieldErrorf(f, "must be an application with a name and endpoints")
		}
		a.Name = strings.TrimSpace(a.Name)
		if !appNameRE.MatchString(a.Name) {
			return core.FieldErrorf(f+".name", "%q must be 1 to 32 lower-case letters, digits and '-', starting with a letter", a.Name)
		}
		if a.Name == JupyterApplication {
			return core.FieldErrorf(f+".name", "%q is the built-in notebook application; choose another name", a.Name)
		}
		if names[a.Name] {
			return core.FieldErrorf(f+".name", "%q is used twice", a.Name)
		}
		names[a.Name] = true
		if a.Type == "" {
			a.Type = "docker"
		}
		if !strings.EqualFold(a.Type, "docker") {
			return core.FieldErrorf(f+".type", "must be docker, got %q", a.Type)
		}
		a.Type = "docker"
		a.Command = strings.TrimSpace(a.Command)
		if a.Image != nil {
			if err := validateAppImage(f, a, loc); err != nil {
				return err
			}
		} else if a.Command == "" {
			return core.FieldErrorf(f+".image", "is required: the Docker image of the application (image: {type: docker, reference: <image>}), or, to run it on the host, a command that starts it")
		} else if InstanceIsolationAt(loc) == IsolationContainer {
			return core.FieldErrorf(f+".image", "is required at location %s: its instances run in containers and their applications from images (image: {type: docker, reference: <image>}); a command alone would run on the host, outside the instance", loc.Name)
		}
		if len(a.Endpoints) == 0 {
			return core.FieldErrorf(f+".endpoints", "needs at least one endpoint {target, published}: the port the application listens on")
		}
		for j, e := range a.Endpoints {
			ef := fmt.Sprintf("%s.endpoints[%d]", f, j)
			if e == nil || e.Target < 1 || e.Target > 65535 {
				return core.FieldErrorf(ef+".target", "must be a port between 1 and 65535")
			}
			if e.Target == ReservedSSHPort {
				return core.FieldErrorf(ef+".target", "port %d is reserved for SSH; an application listens on a port of its own", e.Target)
			}
			if e.Published == 0 {
				e.Published = e.Target
			}
			if e.Published < 1 || e.Published > 65535 {
				return core.FieldErrorf(ef+".published", "must be a port between 1 and 65535, got %d", e.Published)
			}
			if e.Published != e.Target {
				// An application shares its instance's network (the
				// host's, or the instance container's), where no port
				// is remapped, and the proxy reaches it by name on
				// its target: a different published port could not be
				// honoured, and is refused rather than ignored.
				return core.FieldErrorf(ef+".published", "must equal target (%d), got %d: the application shares its instance's network, where no port is remapped, and is reached through the proxy by its name (/computes/<name>/applications/%s/) on its target port; leave published out or set it to %d", e.Target, e.Published, a.Name, e.Target)
			}
			if other, ok := published[e.Published]; ok {
				return core.FieldErrorf(ef+".published", "port %d is published by %s already", e.Published, other)
			}
			published[e.Published] = a.Name
		}
		for k := range a.EnvironmentVariables {
			if !envNameRE.MatchString(k) {
				return core.FieldErrorf(f+".environment_variables."+k, "is not a valid environment variable name")
			}
		}
		if err := validateBindMounts(f, a, loc); err != nil {
			return err
		}
	}
	return nil
}

// InstanceImmutableDifferences lists the fields of an instance that differ
// between two normalised specs although they cannot change after creation.
func InstanceImmutableDifferences(old, new *ComputeSpec) []string {
	out := immutableDifferences(old, new, nil)
	for _, f := range []struct {
		name    string
		differs bool
	}{
		{"create_on_behalf_of", onBehalfOf(old.CreateOnBehalfOf) != onBehalfOf(new.CreateOnBehalfOf)},
		{"setup_scripts", jsonKey(old.SetupScripts) != jsonKey(new.SetupScripts)},
		{"custom_applications", jsonKey(old.CustomApplications) != jsonKey(new.CustomApplications)},
		{"enable_root_access", boolOf(old.EnableRootAccess) != boolOf(new.EnableRootAccess)},
		{"image", old.Image != new.Image},
		{"release_quota_on_stop", boolOf(old.ReleaseQuotaOnStop) != boolOf(new.ReleaseQuotaOnStop)},
	} {
		if f.differs {
			out = append(out, f.name)
		}
	}
	return out
}

func onBehalfOf(c *CreateOnBehalfOf) string {
	if c == nil {
		return ""
	}
	return strings.ToLower(c.UserObjectID)
}

// InstanceIsolationAt is how an instance at loc runs when its host has a
// container runtime: a container of the location's instance_image, unless
// the location runs no containers or names no instance image.
func InstanceIsolationAt(loc *catalog.Location) string {
	if loc.ContainerMode() == catalog.ContainersOff || loc.InstanceImage == "" {
		return IsolationHostProcesses
	}
	return IsolationContainer
}

// validateInstanceImage checks the instance's own image: a valid
// reference, at a location whose instances run as containers. Where they
// run as host processes the image could not be used, so it is refused,
// naming the field, rather than dropped.
func validateInstanceImage(spec *ComputeSpec, loc *catalog.Location) error {
	spec.Image = strings.TrimSpace(spec.Image)
	if spec.Image == "" {
		return nil
	}
	if err := asset.ValidateImageReference("image", spec.Image); err != nil {
		return err
	}
	if InstanceIsolationAt(loc) != IsolationContainer {
		return core.FieldErrorf("image", "cannot be used on location %s: its instances run as processes on the host (no containers there, or no instance_image in its config), not in an image; leave image out, or use a location whose instances are containers", loc.Name)
	}
	return nil
}

// validateRootAccess allows root (Azure's default) only where the
// instance is a container, whose root is not the host's; asked for
// explicitly elsewhere it is refused, never silently dropped.
func validateRootAccess(spec *ComputeSpec, loc *catalog.Location, asked bool) error {
	if asked && InstanceIsolationAt(loc) != IsolationContainer {
		return core.FieldErrorf("enable_root_access", "cannot be true on location %s: its instances run as processes on shared hosts (no containers there, or no instance_image in its config), where root on one instance is root on every user's work; leave it unset or false", loc.Name)
	}
	return nil
}

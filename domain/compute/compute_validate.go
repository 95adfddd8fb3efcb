package compute

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

var computeNameRE = core.LazyRegexp(`^[A-Za-z][A-Za-z0-9-]{2,23}$`)

// ValidateComputeName applies Azure's compute name rule: 3 to 24 characters,
// letters, digits and '-', starting with a letter, and every '-' followed
// later by at least one letter.
func ValidateComputeName(name string) error {
	switch {
	case name == "":
		return core.FieldErrorf("name", "is required")
	case len(name) < 3 || len(name) > 24:
		return core.FieldErrorf("name", "%q must be between 3 and 24 characters long (it has %d)", name, len(name))
	case !core.IsLetter(name[0]):
		return core.FieldErrorf("name", "%q must start with a letter", name)
	case !computeNameRE.MatchString(name):
		return core.FieldErrorf("name", "%q may contain only letters, digits and '-'", name)
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 && !strings.ContainsFunc(name[i+1:], func(r rune) bool { return r < 128 && core.IsLetter(byte(r)) }) {
		return core.FieldErrorf("name", "%q: a '-' must be followed later in the name by at least one letter", name)
	}
	return nil
}

// NormalizeComputeType returns the canonical compute type for the spellings
// users write (amlcompute, AmlCompute, ...).
func NormalizeComputeType(t string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "", ComputeTypeCluster:
		return ComputeTypeCluster, nil
	case ComputeTypeInstance:
		return ComputeTypeInstance, nil
	case ComputeTypeKubernetes:
		return ComputeTypeKubernetes, nil
	}
	return "", core.FieldErrorf("type", "unknown compute type %q; supported: amlcompute (compute cluster), computeinstance (compute instance), kubernetes (attached Kubernetes compute)", t)
}

// NormalizeTier returns the canonical tier for the spellings in use:
// dedicated/Dedicated and low_priority/LowPriority/low-priority.
func NormalizeTier(t string) (string, error) {
	switch strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(t)) {
	case "", "dedicated":
		return TierDedicated, nil
	case "lowpriority":
		return TierLowPriority, nil
	}
	return "", core.FieldErrorf("tier", "unknown tier %q; use dedicated or low_priority", t)
}

// NormalizeIdentityType returns the canonical identity type for the snake
// case and Azure (SystemAssigned, ...) spellings.
func NormalizeIdentityType(t string) (string, error) {
	parts := strings.Split(t, ",")
	var sys, user, none bool
	for _, p := range parts {
		switch strings.ToLower(strings.NewReplacer("_", "", " ", "").Replace(p)) {
		case "systemassigned":
			sys = true
		case "userassigned":
			user = true
		case "none":
			none = true
		default:
			return "", core.FieldErrorf("identity.type", "unknown identity type %q; use none, system_assigned, user_assigned or \"system_assigned,user_assigned\"", t)
		}
	}
	switch {
	case none && (sys || user):
		return "", core.FieldErrorf("identity.type", "none cannot be combined with another identity type")
	case none:
		return IdentityNone, nil
	case sys && user:
		return IdentitySystemAndUserAssigned, nil
	case sys:
		return IdentitySystemAssigned, nil
	default:
		return IdentityUserAssigned, nil
	}
}

var (
	adminUserRE    = core.LazyRegexp(`^[a-z_][a-z0-9_.-]{0,31}$`)
	reservedAdmins = map[string]bool{"root": true, "admin": true, "administrator": true, "daemon": true, "bin": true, "sys": true, "nobody": true, "guest": true, "test": true, "user": true}
	sshKeyPrefixes = []string{"ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ", "ecdsa-sha2-nistp521 ", "sk-ssh-ed25519@openssh.com ", "sk-ecdsa-sha2-nistp256@openssh.com ", "---- BEGIN SSH2 PUBLIC KEY ----", "-----BEGIN PUBLIC KEY-----", "-----BEGIN RSA PUBLIC KEY-----"}
)

// validateSSH checks the SSH settings: complete when SSH is enabled, and
// well-formed whenever given.
func validateSSH(spec *ComputeSpec) error {
	enabled := spec.SSHPublicAccessEnabled != nil && *spec.SSHPublicAccessEnabled
	s := spec.SSHSettings
	if enabled && s == nil {
		return core.FieldErrorf("ssh_settings", "is required when ssh_public_access_enabled is true: give admin_username and ssh_key_value (or admin_password)")
	}
	if s == nil {
		return nil
	}
	if s.AdminUsername == "" {
		if enabled || s.SSHKeyValue != "" || s.AdminPassword != "" {
			return core.FieldErrorf("ssh_settings.admin_username", "is required when SSH settings are given")
		}
		return nil
	}
	if !adminUserRE.MatchString(s.AdminUsername) {
		return core.FieldErrorf("ssh_settings.admin_username", "%q must be 1 to 32 lower-case letters, digits, '_', '.' or '-', starting with a letter or '_'", s.AdminUsername)
	}
	if reservedAdmins[s.AdminUsername] {
		return core.FieldErrorf("ssh_settings.admin_username", "%q is reserved; choose another name (e.g. azureuser)", s.AdminUsername)
	}
	if enabled && s.SSHKeyValue == "" && s.AdminPassword == "" {
		return core.FieldErrorf("ssh_settings.ssh_key_value", "is required when ssh_public_access_enabled is true (or give ssh_settings.admin_password)")
	}
	if s.SSHKeyValue != "" {
		ok := false
		for _, p := range sshKeyPrefixes {
			if strings.HasPrefix(strings.TrimSpace(s.SSHKeyValue), p) {
				ok = true
			}
		}
		if !ok {
			return core.FieldErrorf("ssh_settings.ssh_key_value", "must be an SSH public key in the single-line OpenSSH format (starting with ssh-rsa, ssh-ed25519 or ecdsa-sha2-...) or the multi-line PEM format")
		}
	}
	if p := s.AdminPassword; p != "" {
		if len(p) < 12 || len(p) > 123 {
			return core.FieldErrorf("ssh_settings.admin_password", "must be 12 to 123 characters long")
		}
		classes := 0
		for _, f := range []func(rune) bool{core.IsLowerRune, core.IsUpperRune, core.IsDigitRune, isSpecialRune} {
			if strings.ContainsFunc(p, f) {
				classes++
			}
		}
		if classes < 3 {
			return core.FieldErrorf("ssh_settings.admin_password", "must contain three of: a lower-case letter, an upper-case letter, a digit, a special character")
		}
	}
	return nil
}

func isSpecialRune(r rune) bool {
	return !core.IsLowerRune(r) && !core.IsUpperRune(r) && !core.IsDigitRune(r)
}

// normalizeIdentity canonicalises the identity type and checks its shape.
func normalizeIdentity(id *IdentitySpec) error {
	if id == nil {
		return nil
	}
	if id.Type == "" {
		return core.FieldErrorf("identity.type", "is required when identity is given")
	}
	t, err := NormalizeIdentityType(id.Type)
	if err != nil {
		return err
	}
	id.Type = t
	hasUser := strings.Contains(t, IdentityUserAssigned)
	if hasUser && len(id.UserAssignedIdentities) == 0 {
		return core.FieldErrorf("identity.user_assigned_identities", "must list at least one identity (resource_id) when the type is %s", t)
	}
	if !hasUser && len(id.UserAssignedIdentities) > 0 {
		return core.FieldErrorf("identity.user_assigned_identities", "is only allowed when the type includes user_assigned (it is %s)", t)
	}
	seen := map[string]bool{}
	for i, u := range id.UserAssignedIdentities {
		f := fmt.Sprintf("identity.user_assigned_identities[%d].resource_id", i)
		if strings.TrimSpace(u.ResourceID) == "" {
			return core.FieldErrorf(f, "is required")
		}
		if seen[strings.ToLower(u.ResourceID)] {
			return core.FieldErrorf(f, "%q is listed twice", u.ResourceID)
		}
		seen[strings.ToLower(u.ResourceID)] = true
	}
	return nil
}

// NormalizeComputeSpec normalises a cluster or an instance spec, by its
// type (see NormalizeClusterSpec and NormalizeInstanceSpec).
func NormalizeComputeSpec(spec *ComputeSpec, cat *catalog.Catalog, defaultLocation string) (*catalog.Location, *catalog.Size, error) {
	t, err := NormalizeComputeType(spec.Type)
	if err != nil {
		return nil, nil, err
	}
	switch t {
	case ComputeTypeInstance:
		return NormalizeInstanceSpec(spec, cat, defaultLocation)
	case ComputeTypeKubernetes:
		return NormalizeKubernetesSpec(spec, cat)
	}
	return NormalizeClusterSpec(spec, cat, defaultLocation)
}

// NormalizeClusterSpec applies defaults to a compute cluster spec, puts
// enumerations in their canonical spelling, and checks every rule. It
// returns the resolved location and size. defaultLocation is the
// workspace's location, used when the spec names none.
func NormalizeClusterSpec(spec *ComputeSpec, cat *catalog.Catalog, defaultLocation string) (*catalog.Location, *catalog.Size, error) {
	if err := ValidateComputeName(spec.Name); err != nil {
		return nil, nil, err
	}
	t, err := NormalizeComputeType(spec.Type)
	if err != nil {
		return nil, nil, err
	}
	if t != ComputeTypeCluster {
		return nil, nil, core.FieldErrorf("type", "%s is not a compute cluster", t)
	}
	spec.Type = t
	if spec.Tier, err = NormalizeTier(spec.Tier); err != nil {
		return nil, nil, err
	}
	loc, size, err := resolvePlacement(spec, cat, defaultLocation, DefaultClusterSize)
	if err != nil {
		return nil, nil, err
	}
	if spec.Tier == TierLowPriority && !size.LowPriorityCapable {
		return nil, nil, core.FieldErrorf("tier", "size %q cannot run on low_priority capacity; use tier: dedicated or another size", size.Name)
	}
	setDefaultInt(&spec.MinInstances, DefaultMinInstances)
	setDefaultInt(&spec.MaxInstances, DefaultMaxInstances)
	setDefaultInt(&spec.IdleTimeBeforeScaleDown, DefaultIdleTimeBeforeScaleDown)
	if spec.SSHPublicAccessEnabled == nil {
		f := false
		spec.SSHPublicAccessEnabled = &f
	}
	if spec.EnableNodePublicIP == nil {
		t := true
		spec.EnableNodePublicIP = &t
	}
	if err := ValidateScaleSettings(*spec.MinInstances, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown); err != nil {
		return nil, nil, err
	}
	if err := validateIdlePolicy(spec.IdlePolicy, spec.WaitCostPerHour); err != nil {
		return nil, nil, err
	}
	if f := spec.TierFallback; f != nil {
		if spec.Tier != TierLowPriority {
			return nil, nil, core.FieldErrorf("tier_fallback", "only applies to tier: low_priority")
		}
		d, err := time.ParseDuration(strings.TrimSpace(f.After))
		if err != nil || d < 0 || d > 24*time.Hour {
			return nil, nil, core.FieldErrorf("tier_fallback.after", "%q must be a duration from 0s to 24h, e.g. 10m", f.After)
		}
		f.After = d.String()
	}
	if err := validateSSH(spec); err != nil {
		return nil, nil, err
	}
	if n := spec.NetworkSettings; n != nil {
		if n.Subnet != "" && n.VnetName == "" && !strings.HasPrefix(n.Subnet, "/") {
			return nil, nil, core.FieldErrorf("network_settings.vnet_name", "is required with a subnet name (or give the subnet as a full resource id)")
		}
		if n.VnetName == "" && n.Subnet == "" {
			spec.NetworkSettings = nil
		}
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
	if err := ValidatePrepullImages(spec.PrepullImages); err != nil {
		return nil, nil, err
	}
	return loc, size, nil
}

// resolvePlacement fills in the size and location a spec omits and
// resolves them in the catalog: the location (by name or alias) must
// exist and offer the size for the spec's compute type.
func resolvePlacement(spec *ComputeSpec, cat *catalog.Catalog, defaultLocation, defaultSize string) (*catalog.Location, *catalog.Size, error) {
	if spec.Size == "" {
		spec.Size = defaultSize
	}
	if spec.Location == "" {
		spec.Location = defaultLocation
	}
	spec.Location = strings.TrimSpace(spec.Location)
	loc, err := cat.Location(spec.Location)
	if err != nil {
		return nil, nil, err
	}
	size, err := cat.CheckSize(spec.Size, spec.Type, loc)
	if err != nil {
		return nil, nil, err
	}
	return loc, size, nil
}

// MaxClusterNodes bounds max_instances; far above any real cluster, it keeps
// arithmetic on node counts safe.
const MaxClusterNodes = 10000

// ValidateScaleSettings checks min_instances, max_instances and
// idle_time_before_scale_down together.
func ValidateScaleSettings(minN, maxN, idle int) error {
	switch {
	case minN < 0:
		return core.FieldErrorf("min_instances", "must be 0 or more, got %d", minN)
	case maxN < 1:
		return core.FieldErrorf("max_instances", "must be 1 or more, got %d", maxN)
	case maxN > MaxClusterNodes:
		return core.FieldErrorf("max_instances", "must be at most %d, got %d", MaxClusterNodes, maxN)
	case maxN < minN:
		return core.FieldErrorf("max_instances", "must be greater than or equal to min_instances (%d), got %d", minN, maxN)
	case idle < 0:
		return core.FieldErrorf("idle_time_before_scale_down", "must be 0 or more seconds, got %d", idle)
	}
	return nil
}

func setDefaultInt(p **int, v int) {
	if *p == nil {
		*p = &v
	}
}

// ImmutableDifferences lists the fields that differ between an existing
// cluster spec and a new one although they cannot change after creation.
// Both specs must be normalised.
func ImmutableDifferences(old, new *ComputeSpec) []string {
	return immutableDifferences(old, new, map[string]bool{
		"tier":          old.Tier != new.Tier,
		"ssh_settings":  sshOf(old.SSHSettings) != sshOf(new.SSHSettings),
		"resource_id":   old.ResourceID != new.ResourceID,
		"namespace":     old.Namespace != new.Namespace,
		"instance_type": !strings.EqualFold(old.InstanceType, new.InstanceType),
	})
}

// immutableOrder is the order fixed fields are reported in: the
// document's.
var immutableOrder = []string{"type", "resource_id", "namespace", "instance_type", "size", "tier", "location", "ssh_public_access_enabled", "ssh_settings", "network_settings", "enable_node_public_ip"}

// immutableDifferences lists the fields every compute keeps for life
// (type, size, location, SSH access, network) that differ, with the
// type's own fixed fields (typed), in the document's order.
func immutableDifferences(old, new *ComputeSpec, typed map[string]bool) []string {
	differs := map[string]bool{
		"type":                      !strings.EqualFold(old.Type, new.Type),
		"size":                      !strings.EqualFold(old.Size, new.Size),
		"location":                  !strings.EqualFold(old.Location, new.Location),
		"ssh_public_access_enabled": boolOf(old.SSHPublicAccessEnabled) != boolOf(new.SSHPublicAccessEnabled),
		"network_settings":          netOf(old.NetworkSettings) != netOf(new.NetworkSettings),
		"enable_node_public_ip":     boolOf(old.EnableNodePublicIP) != boolOf(new.EnableNodePublicIP),
	}
	var out []string
	for _, f := range immutableOrder {
		if differs[f] || typed[f] {
			out = append(out, f)
		}
	}
	return out
}

func boolOf(b *bool) bool { return b != nil && *b }

func sshOf(s *SSHSettings) SSHSettings {
	if s == nil {
		return SSHSettings{}
	}
	return SSHSettings{AdminUsername: s.AdminUsername, AdminPassword: s.AdminPassword, AdminPasswordHash: s.AdminPasswordHash, SSHKeyValue: strings.TrimSpace(s.SSHKeyValue)}
}

func netOf(n *NetworkSettings) NetworkSettings {
	if n == nil {
		return NetworkSettings{}
	}
	return *n
}

// validateIdlePolicy checks idle_policy and wait_cost_per_hour.
func validateIdlePolicy(policy string, waitCost *float64) error {
	switch policy {
	case "", IdlePolicyAdaptive:
	default:
		return core.FieldErrorf("idle_policy", "%q must be adaptive (or absent: idle_time_before_scale_down alone)", policy)
	}
	if waitCost != nil {
		if *waitCost < 0 || *waitCost > 1e6 || *waitCost != *waitCost {
			return core.FieldErrorf("wait_cost_per_hour", "%v must be a price between 0 and 1000000", *waitCost)
		}
		if policy != IdlePolicyAdaptive {
			return core.FieldErrorf("wait_cost_per_hour", "only applies with idle_time_before_scale_down: adaptive")
		}
	}
	return nil
}

// validateComputeDescription bounds a compute's description and refuses
// control characters but newline and tab, as job display names refuse
// them: the CLI and the studio print descriptions, and an ESC or a CR
// there would drive the reader's terminal.
func validateComputeDescription(s string) error {
	if len(s) > 2000 {
		return core.FieldErrorf("description", "must be at most 2000 characters")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return core.IsUnprintable(r) && r != '\n' && r != '\t' }) {
		return core.FieldErrorf("description", "must not contain control characters (only newlines and tabs) nor bidirectional overrides")
	}
	return nil
}

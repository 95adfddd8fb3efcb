package container

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// isKind reports whether err is of kind.
// networkName is what a network name may be (Docker's rule); not
// "container:ID", which would share another container's namespace.
var networkName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }

// userPattern is "uid" or "uid:gid", numeric: the run-as user is a
// host uid, and a name would be looked up in the image instead.
var userPattern = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)

// envKey is a POSIX environment variable name.
var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validate refuses a spec the engine would refuse less clearly (or
// accept wrongly), naming the field and the rule.
func (e *Engine) validate(s Spec) error {
	op := "run " + s.Image
	bad := func(format string, args ...any) error { return errorf(ErrInvalid, op, format, args...) }
	if s.Image == "" {
		return bad("spec.Image is required")
	}
	if _, err := reference.ParseAnyReference(s.Image); err != nil {
		return bad("spec.Image %q: %v", s.Image, err)
	}
	for k := range s.Env {
		if !envKey.MatchString(k) {
			return bad("spec.Env key %q must be a letter or _ followed by letters, digits or _", k)
		}
	}
	if s.WorkingDir != "" && !filepath.IsAbs(s.WorkingDir) {
		return bad("spec.WorkingDir %q must be an absolute path", s.WorkingDir)
	}
	if s.User != "" && !userPattern.MatchString(s.User) {
		return bad("spec.User %q must be uid or uid:gid (numbers)", s.User)
	}
	if s.NanoCPUs < 0 || s.MemoryBytes < 0 {
		return bad("spec.NanoCPUs and spec.MemoryBytes must not be negative")
	}
	if s.MemoryBytes > 0 && s.MemoryBytes < 6<<20 {
		return bad("spec.MemoryBytes %d is below the 6 MiB a container needs", s.MemoryBytes)
	}
	switch {
	case s.Network == "", s.Network == "host", s.Network == "none", s.Network == NetworkOwn:
	case networkName.MatchString(s.Network):
		// A network of the engine's own (Networker.EnsureNetwork).
	case strings.HasPrefix(s.Network, "container:") && networkName.MatchString(strings.TrimPrefix(s.Network, "container:")):
		// Another container's network namespace, shared (an instance's
		// applications beside it on its subnet).
	default:
		return bad("spec.Network %q must be \"host\", \"none\", %q, empty, a network's name or container:<id>", s.Network, NetworkOwn)
	}
	switch s.Userns {
	case "":
	case "auto":
		if !e.podman {
			return bad("spec.Userns %q: only podman gives a container a user namespace of its own (Docker's daemon decides with userns-remap)", s.Userns)
		}
	default:
		return bad("spec.Userns %q must be \"auto\" or empty", s.Userns)
	}
	for i, m := range s.Mounts {
		if m.Chown && !e.podman {
			return bad("spec.Mounts[%d].Chown: only podman gives a mount to the container's mapped user", i)
		}
		if strings.ContainsAny(m.Source+m.Target, ":,") && m.Chown {
			return bad("spec.Mounts[%d]: a chowned mount's paths may not hold ':' or ','", i)
		}
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
			return bad("spec.Mounts[%d]: source %q and target %q must be absolute paths", i, m.Source, m.Target)
		}
		if _, err := os.Stat(m.Source); err != nil {
			return bad("spec.Mounts[%d].Source %q does not exist on this host", i, m.Source)
		}
	}
	for i, d := range s.Devices {
		if d.CDI {
			if !strings.Contains(d.Path, "/") || !strings.Contains(d.Path, "=") {
				return bad("spec.Devices[%d] %q must be a CDI name vendor/class=name", i, d.Path)
			}
		} else if !strings.HasPrefix(d.Path, "/dev/") {
			return bad("spec.Devices[%d] %q must be a device node under /dev", i, d.Path)
		}
	}
	for i, u := range s.Ulimits {
		if u.Name == "" || u.Soft < 0 || u.Hard < u.Soft {
			return bad("spec.Ulimits[%d] %s=%d:%d must name a limit with 0 <= soft <= hard", i, u.Name, u.Soft, u.Hard)
		}
		if max, ok := e.hostLimits[u.Name]; ok && max >= 0 && u.Hard > max {
			return bad("spec.Ulimits[%d] %s hard limit %d exceeds this host's hard limit %s", i, u.Name, u.Hard, limitString(max))
		}
	}
	return nil
}

package asset

import (
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Registry is a private container registry a workspace's jobs pull their
// images from (`shoal registry add`). Its password is kept sealed by the
// server's secrets key and leaves the server only inside the task of a
// job whose image comes from this registry (AgentTask.Container): it is
// never part of a Registry's JSON, so no list, show, event or log line
// carries it.
type Registry struct {
	Workspace string `json:"-"`
	// Server is the registry's host[:port], as image references name it
	// ("localhost:5000", "myregistry.azurecr.io").
	Server   string `json:"server"`
	Username string `json:"username"`
	// Insecure: reached over plain HTTP; only when added with --insecure.
	Insecure bool `json:"insecure,omitempty"`
	// Push: images built on the workspace's nodes are pushed here
	// (under PushRepository), so other nodes pull them rather than build
	// them again. At most one registry of a workspace has it.
	Push      bool      `json:"push,omitempty"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
	// SealedPassword is the password sealed by the server's secrets key
	// (internal/sealing, context RegistrySealContext); empty for an
	// insecure registry kept without a login.
	SealedPassword string `json:"-"`
}

// RegistryAdd is the request that adds (or replaces) a registry login.
type RegistryAdd struct {
	Server   string `json:"server"`
	Username string `json:"username"`
	Password string `json:"password"`
	Insecure bool   `json:"insecure,omitempty"`
	// Push makes it the workspace's registry for built images.
	Push bool `json:"push,omitempty"`
}

// String hides the password, so that a request printed by mistake leaks
// nothing.
func (r RegistryAdd) String() string { return "registry " + r.Server + " as " + r.Username }

// GoString hides the password from %#v as well.
func (r RegistryAdd) GoString() string { return r.String() }

// Validate checks the request; the error names the field and the rule.
func (r *RegistryAdd) Validate() error {
	r.Server = strings.TrimSpace(r.Server)
	if r.Server == "" {
		return core.FieldErrorf("server", "is required: the registry's host[:port], as image references name it (localhost:5000)")
	}
	if strings.Contains(r.Server, "://") || strings.Contains(r.Server, "/") {
		return core.FieldErrorf("server", "%q must be a host[:port] only, without a scheme or a path (localhost:5000, not http://localhost:5000/v2)", core.Short(r.Server))
	}
	if !imageDomainRE.MatchString(r.Server) {
		return core.FieldErrorf("server", "%q is not a registry host: a host name or IP address with an optional :port", core.Short(r.Server))
	}
	if r.Username == "" && r.Password == "" {
		// A registry without a login is kept only to be reached over
		// plain HTTP.
		if !r.Insecure {
			return core.FieldErrorf("username", "is required, unless the registry is added only to be reached over plain HTTP (--insecure)")
		}
		return nil
	}
	if r.Username == "" {
		return core.FieldErrorf("username", "is required with a password")
	}
	if len(r.Username) > 256 || strings.ContainsFunc(r.Username, func(c rune) bool { return c < ' ' }) {
		return core.FieldErrorf("username", "must be at most 256 characters without control characters")
	}
	if r.Password == "" {
		return core.FieldErrorf("password", "is required (the CLI reads it from standard input: --password-stdin)")
	}
	if len(r.Password) > 8192 {
		return core.FieldErrorf("password", "must be at most 8192 bytes")
	}
	return nil
}

// RegistrySealContext is the context a registry's password is sealed
// under: a sealed password copied to another workspace's or registry's
// row does not open.
func RegistrySealContext(workspace, server string) string {
	return "registry/" + strings.ToLower(workspace) + "/" + strings.ToLower(server)
}

// ImageRegistry is the registry an image reference pulls from, as Docker
// decides it: the first path component when it has a '.' or a ':' or is
// localhost, else Docker Hub ("docker.io").
func ImageRegistry(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if first, _, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:[") || first == "localhost") {
		return strings.ToLower(first)
	}
	return "docker.io"
}

// PushRepository is where images built for a workspace's jobs are pushed
// in its push registry: <server>/shoal/<workspace>, the workspace's name
// lower-cased with anything an image path may not hold made '-'.
func (r *Registry) PushRepository() string {
	ws := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			return c
		case c >= 'A' && c <= 'Z':
			return c + 'a' - 'A'
		}
		return '-'
	}, r.Workspace)
	ws = strings.Trim(ws, "-")
	if ws == "" {
		ws = "workspace"
	}
	return strings.ToLower(r.Server) + "/shoal/" + ws
}

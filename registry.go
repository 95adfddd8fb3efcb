package shoal

import (
	"strings"
	"time"
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
	Insecure  bool      `json:"insecure,omitempty"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
	// SealedPassword is the password sealed by the server's secrets key
	// (internal/sealing, context RegistrySealContext).
	SealedPassword string `json:"-"`
}

// RegistryAdd is the request that adds (or replaces) a registry login.
type RegistryAdd struct {
	Server   string `json:"server"`
	Username string `json:"username"`
	Password string `json:"password"`
	Insecure bool   `json:"insecure,omitempty"`
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
		return FieldErrorf("server", "is required: the registry's host[:port], as image references name it (localhost:5000)")
	}
	if strings.Contains(r.Server, "://") || strings.Contains(r.Server, "/") {
		return FieldErrorf("server", "%q must be a host[:port] only, without a scheme or a path (localhost:5000, not http://localhost:5000/v2)", jobShort(r.Server))
	}
	if !imageDomainRE.MatchString(r.Server) {
		return FieldErrorf("server", "%q is not a registry host: a host name or IP address with an optional :port", jobShort(r.Server))
	}
	if r.Username == "" {
		return FieldErrorf("username", "is required")
	}
	if len(r.Username) > 256 || strings.ContainsFunc(r.Username, func(c rune) bool { return c < ' ' }) {
		return FieldErrorf("username", "must be at most 256 characters without control characters")
	}
	if r.Password == "" {
		return FieldErrorf("password", "is required (the CLI reads it from standard input: --password-stdin)")
	}
	if len(r.Password) > 8192 {
		return FieldErrorf("password", "must be at most 8192 bytes")
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

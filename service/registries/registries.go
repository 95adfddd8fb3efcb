// Package registries is the request service of a workspace's private
// container registries (`shoal registry add|list|remove`): their logins,
// kept with the password sealed by the server's secrets key, and the
// logins a job's task carries for the pull of its image.
package registries

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// Config configures a Service.
type Config struct {
	Store store.Store
	// SecretsKey seals the passwords; nil: the server keeps no registry
	// login, and says so.
	SecretsKey *sealing.Key
}

// Service keeps a workspace's registry logins.
type Service struct {
	store store.Store
	key   *sealing.Key
}

// New returns a Service over cfg's store.
func New(cfg Config) *Service { return &Service{store: cfg.Store, key: cfg.SecretsKey} }

// noSecretsKey is the refusal of a server that cannot seal a password.
func noSecretsKey() error {
	return core.Errorf(core.EINVALID, "this server has no secrets key, and registry passwords are only ever stored encrypted: set secrets_key_file in the server's config (default <data-dir>/keys/workload.key) and restart it")
}

// AddRegistry adds a registry login to a workspace, or replaces the one
// of the same server. The answer carries no password.
func (s *Service) AddRegistry(ctx context.Context, workspace string, req *asset.RegistryAdd) (*asset.Registry, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.key == nil && req.Password != "" {
		return nil, noSecretsKey()
	}
	var out *asset.Registry
	err := s.store.Update(ctx, func(tx store.Tx) error {
		w, err := tx.GetWorkspace(workspace)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.WorkspaceNotFound(workspace)
		} else if err != nil {
			return err
		}
		r := &asset.Registry{Workspace: w.Name, Server: strings.ToLower(req.Server), Username: req.Username, Insecure: req.Insecure, Push: req.Push, CreatedBy: identity.ActorName(ctx)}
		// An insecure registry may be kept without a login.
		if req.Password != "" {
			if r.SealedPassword, err = s.key.Seal([]byte(req.Password), asset.RegistrySealContext(r.Workspace, r.Server)); err != nil {
				return fmt.Errorf("seal the password of registry %s: %w", r.Server, err)
			}
		}
		if r.Push {
			// One registry receives the workspace's built images.
			others, err := tx.ListRegistries(w.Name)
			if err != nil {
				return err
			}
			for _, o := range others {
				if o.Push && !strings.EqualFold(o.Server, r.Server) {
					o.Push = false
					if err := tx.PutRegistry(o); err != nil {
						return err
					}
				}
			}
		}
		if err := tx.PutRegistry(r); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListRegistries returns a workspace's registry logins, without their
// passwords (a Registry's JSON never has one).
func (s *Service) ListRegistries(ctx context.Context, workspace string) (out []*asset.Registry, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(workspace); core.ErrorCode(err) == core.ENOTFOUND {
			return core.WorkspaceNotFound(workspace)
		} else if err != nil {
			return err
		}
		out, err = tx.ListRegistries(workspace)
		return err
	})
	for _, r := range out {
		r.SealedPassword = ""
	}
	if out == nil {
		out = []*asset.Registry{}
	}
	return out, err
}

// RemoveRegistry removes a workspace's registry login. Returns ENOTFOUND.
func (s *Service) RemoveRegistry(ctx context.Context, workspace, server string) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		return tx.DeleteRegistry(workspace, server)
	})
}

// Package datastores is the request service of a workspace's datastores
// (`shoal datastore create|list|show|delete`, Azure's ARM datastores):
// named connections to storage, their credentials sealed by the server's
// secrets key, and the unsealing of those credentials for the one place
// that may carry them: a job's task on its node.
package datastores

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// Secret is a datastore's credentials in clear, as Resolve opens them:
// for an AgentTask and ARM's listSecrets only, never for JSON of a
// datastore, an event or a log (its String hides the secrets).
type Secret = asset.Credentials

// Config configures a Service.
type Config struct {
	Store store.Store
	// SecretsKey seals the credentials; nil: the server keeps no
	// datastore with credentials, and says so.
	SecretsKey *sealing.Key
}

// Service keeps a workspace's datastores.
type Service struct {
	store store.Store
	key   *sealing.Key
}

// New returns a Service over cfg's store.
func New(cfg Config) *Service { return &Service{store: cfg.Store, key: cfg.SecretsKey} }

// noSecretsKey is the refusal of a server that cannot seal credentials.
func noSecretsKey() error {
	return core.Errorf(core.EINVALID, "this server has no secrets key, and datastore credentials are only ever stored encrypted: set secrets_key_file in the server's config (default <data-dir>/keys/workload.key) and restart it, or create the datastore without credentials")
}

// builtinRefusal is the refusal to change or delete a built-in.
func builtinRefusal(name, what string) error {
	return core.FieldErrorf("name", "%s is a built-in datastore (Shoal's own file store), present in every workspace: it cannot be %s", name, what)
}

// Create creates a datastore, or replaces the one of the same name (as
// `az ml datastore create` does), and reports whether it was created. The
// credentials are sealed before anything is stored; the answer carries
// none (a Datastore's JSON never has them).
func (s *Service) Create(ctx context.Context, workspace string, spec *asset.DatastoreSpec) (*asset.Datastore, bool, error) {
	if err := spec.Validate(); err != nil {
		return nil, false, err
	}
	if s.key == nil && !spec.Credentials.IsZero() {
		return nil, false, noSecretsKey()
	}
	var (
		out     *asset.Datastore
		created bool
	)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		out, created = nil, false // a run again starts over
		w, err := core.WorkspaceForWrite(tx, workspace)
		if err != nil {
			return err
		}
		d := spec.Datastore
		d.Workspace, d.SealedCredentials = w.Name, ""
		d.IsDefault, d.CreatedBy, d.CreatedOn = false, identity.ActorName(ctx), tx.Now()
		old, err := tx.GetDatastore(w.Name, d.Name)
		switch {
		case err == nil:
			// A replaced datastore keeps who created it when.
			d.CreatedOn, d.CreatedBy = old.CreatedOn, old.CreatedBy
		case core.ErrorCode(err) == core.ENOTFOUND:
			created = true
		default:
			return err
		}
		if !spec.Credentials.IsZero() {
			plain, err := json.Marshal(spec.Credentials)
			if err != nil {
				return err
			}
			if d.SealedCredentials, err = s.key.Seal(plain, asset.DatastoreSealContext(d.Workspace, d.Name)); err != nil {
				return fmt.Errorf("seal the credentials of datastore %s: %w", d.Name, err)
			}
		}
		if err := tx.PutDatastore(&d); err != nil {
			return err
		}
		d.SealedCredentials = ""
		out = &d
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// workspaceOf returns the workspace, or ENOTFOUND naming it.
func workspaceOf(tx store.Tx, workspace string) (*core.Workspace, error) {
	w, err := tx.GetWorkspace(workspace)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.WorkspaceNotFound(workspace)
	}
	return w, err
}

// all returns the built-ins and the stored datastores, by name, sealed
// credentials included: for the package's own use only.
func all(tx store.Tx, workspace string) ([]*asset.Datastore, error) {
	w, err := workspaceOf(tx, workspace)
	if err != nil {
		return nil, err
	}
	stored, err := tx.ListDatastores(w.Name)
	if err != nil {
		return nil, err
	}
	out := append(asset.BuiltinDatastores(w.Name, w.CreatedOn), stored...)
	slices.SortStableFunc(out, func(a, b *asset.Datastore) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out, nil
}

// List returns a workspace's datastores, the built-ins included, by
// name, without their credentials.
func (s *Service) List(ctx context.Context, workspace string) (out []*asset.Datastore, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = all(tx, workspace)
		return err
	})
	for _, d := range out {
		d.SealedCredentials = ""
	}
	if out == nil {
		out = []*asset.Datastore{}
	}
	return out, err
}

// get reads one datastore, a built-in or a stored one, sealed
// credentials included. Returns ENOTFOUND.
func get(tx store.Tx, workspace, name string) (*asset.Datastore, error) {
	w, err := workspaceOf(tx, workspace)
	if err != nil {
		return nil, err
	}
	if asset.IsBuiltinDatastore(name) {
		for _, d := range asset.BuiltinDatastores(w.Name, w.CreatedOn) {
			if strings.EqualFold(d.Name, name) {
				return d, nil
			}
		}
	}
	return tx.GetDatastore(w.Name, name)
}

// Get returns one datastore, without its credentials. Returns ENOTFOUND.
func (s *Service) Get(ctx context.Context, workspace, name string) (out *asset.Datastore, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = get(tx, workspace, name)
		return err
	})
	if out != nil {
		out.SealedCredentials = ""
	}
	return out, err
}

// Delete removes a datastore; the built-ins are refused. Data assets
// that name it stay (Azure allows it) and then fail to resolve, naming
// it. Returns ENOTFOUND.
func (s *Service) Delete(ctx context.Context, workspace, name string) error {
	if asset.IsBuiltinDatastore(name) {
		return builtinRefusal(name, "deleted")
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspaceOf(tx, workspace)
		if err != nil {
			return err
		}
		return tx.DeleteDatastore(w.Name, name)
	})
}

// Resolve returns a datastore and its credentials opened, for the
// server to put in a job's AgentTask (and for ARM's listSecrets, whose
// route requires the right to write datastores). Nothing it returns may
// be logged, stored in clear or answered to a reader. Returns ENOTFOUND.
func (s *Service) Resolve(ctx context.Context, workspace, name string) (d asset.Datastore, sec Secret, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		got, err := get(tx, workspace, name)
		if err != nil {
			return err
		}
		d, sec, err = Open(s.key, got)
		return err
	})
	return d, sec, err
}

// ResolveTx is Resolve inside the caller's transaction (a job's
// placement reads its inputs' datastores with the attempt).
func ResolveTx(tx store.Tx, key *sealing.Key, workspace, name string) (asset.Datastore, Secret, error) {
	got, err := get(tx, workspace, name)
	if err != nil {
		return asset.Datastore{}, Secret{}, err
	}
	return Open(key, got)
}

// ForURI returns the datastore that owns what u names
// (asset.OwningDatastore among the workspace's, built-ins included) and
// its credentials opened; ok is false when none owns it (the fetch is
// then anonymous). A URIDatastore naming no datastore is ENOTFOUND.
func ForURI(tx store.Tx, key *sealing.Key, workspace string, u asset.DataURI) (d asset.Datastore, sec Secret, ok bool, err error) {
	list, err := all(tx, workspace)
	if err != nil {
		return d, sec, false, err
	}
	owner := asset.OwningDatastore(u, list)
	if owner == nil {
		if u.Kind == asset.URIDatastore {
			return d, sec, false, core.Errorf(core.ENOTFOUND, "datastore %s is not in workspace %s (named by %s); see `shoal datastore list`", u.Datastore, workspace, core.Short(u.Raw))
		}
		return d, sec, false, nil
	}
	d, sec, err = Open(key, owner)
	return d, sec, err == nil, err
}

// Open opens a stored datastore's sealed credentials. The datastore
// returned has SealedCredentials cleared. A datastore whose credentials
// this server's key cannot open is an error naming the datastore (and
// never the value).
func Open(key *sealing.Key, d *asset.Datastore) (asset.Datastore, Secret, error) {
	out, sealed := *d, d.SealedCredentials
	out.SealedCredentials = ""
	var sec Secret
	if sealed == "" {
		return out, sec, nil
	}
	if key == nil {
		return out, sec, core.Errorf(core.EINVALID, "datastore %s has credentials sealed by a secrets key this server does not have: set secrets_key_file, or create the datastore again", d.Name)
	}
	plain, err := key.Open(sealed, asset.DatastoreSealContext(d.Workspace, d.Name))
	if err != nil {
		return out, sec, core.Errorf(core.EINVALID, "the credentials of datastore %s cannot be opened: %v; create the datastore again with its credentials", d.Name, err)
	}
	if err := json.Unmarshal(plain, &sec); err != nil {
		return out, sec, core.Errorf(core.EINVALID, "the credentials of datastore %s are not readable; create the datastore again with its credentials", d.Name)
	}
	return out, sec, nil
}

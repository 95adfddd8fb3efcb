// Package versioned is the request service of versioned assets, written
// once for every kind (environments, command components, data assets and
// models): create a version (the next integer one when none is
// given, as Azure numbers them), list, show by version or the label
// latest, archive and restore. What differs between kinds (checking a
// document, the artifacts it names, what makes two versions the same) is
// the kind's package's, given as a Kind; environments/ and components/
// are those packages.
package versioned

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// Artifacts is what a kind's checks read of the file store: the uploaded
// code folders and build contexts its versions name.
type Artifacts interface {
	HasArtifact(workspace, id string) bool
	OpenArtifact(workspace, id string) (io.ReadCloser, error)
}

// Stores are what a kind's service is built over (environments.New,
// components.New): the store and the file store.
type Stores struct {
	Store store.Store
	// Artifacts holds uploaded code and build contexts; nil refuses
	// versions that name one.
	Artifacts Artifacts
}

// Kind is what one kind of asset adds to the shared rules.
type Kind[T asset.Asset] struct {
	// Normalize checks a version before it is created and puts its
	// fields in canonical form (as shoal.NormalizeEnvironment does).
	Normalize func(a T) error
	// Check, when set, refuses a normalized version for what lies outside
	// its document, such as artifacts that were never uploaded, before
	// anything is stored.
	Check func(a T) error
	// Same reports whether two versions define the same asset (what a
	// job or step gets), whoever created them when: creating a version
	// again is idempotent only then.
	Same func(a, b T) bool
}

// Config configures a Service.
type Config[T asset.Asset] struct {
	Store store.Store
	Kind  Kind[T]
}

// Service registers versions of one kind of asset in a workspace.
type Service[T asset.Asset] struct {
	store store.Store
	kind  Kind[T]
	// noun is the kind's name in messages.
	noun asset.AssetKind
}

// New returns a Service over cfg's store.
func New[T asset.Asset](cfg Config[T]) *Service[T] {
	return &Service[T]{store: cfg.Store, kind: cfg.Kind, noun: asset.KindOf[T]()}
}

// Create creates a version of a's name in a's workspace: its version, or
// when empty the next integer version (1 for a new name), as Azure does.
// Creating a version that exists with the same definition returns it
// (created false); with another definition it is ECONFLICT, since a
// version never changes once jobs may run it.
func (s *Service[T]) Create(ctx context.Context, a T) (T, bool, error) {
	var zero T
	if err := s.kind.Normalize(a); err != nil {
		return zero, false, err
	}
	if s.kind.Check != nil {
		if err := s.kind.Check(a); err != nil {
			return zero, false, err
		}
	}
	out, created := zero, false
	// insert gives a its version and creation; a run again
	// (store.Store.Update) starts from the request's.
	meta := a.AssetMeta()
	err := s.store.Update(ctx, func(tx store.Tx) error {
		a.SetAssetMeta(meta)
		var err error
		out, created, err = s.insert(tx, a, identity.ActorName(ctx))
		return err
	})
	if err != nil {
		return zero, false, err
	}
	return out, created, nil
}

// CreateTx is Create inside the caller's transaction, for the server's
// own registrations (a job's output registered when the job completes):
// createdBy is who the version is recorded as created by (the job's
// submitter).
func (s *Service[T]) CreateTx(tx store.Tx, a T, createdBy string) (T, bool, error) {
	var zero T
	if err := s.kind.Normalize(a); err != nil {
		return zero, false, err
	}
	if s.kind.Check != nil {
		if err := s.kind.Check(a); err != nil {
			return zero, false, err
		}
	}
	return s.insert(tx, a, createdBy)
}

// insert stores a normalized and checked a (Create's rules) in tx.
func (s *Service[T]) insert(tx store.Tx, a T, createdBy string) (T, bool, error) {
	var zero T
	out, created := zero, false
	err := func() error {
		m := a.AssetMeta()
		w, err := tx.GetWorkspace(m.Workspace)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.ENOTFOUND, "workspace %q not found", m.Workspace)
		} else if err != nil {
			return err
		}
		m.Workspace = w.Name
		if m.Version == "" {
			list, err := asset.ListAssetVersions[T](tx, asset.AssetFilter{Workspace: m.Workspace, Name: m.Name, Archived: true})
			if err != nil {
				return err
			}
			m.Version = asset.NextAssetVersion(list)
		} else if old, err := asset.GetAssetVersion[T](tx, m.Workspace, m.Name, m.Version); err == nil {
			a.SetAssetMeta(m)
			if !s.kind.Same(old, a) {
				om := old.AssetMeta()
				return &core.Error{Code: core.ECONFLICT, Field: "version", Message: fmt.Sprintf(
					"version: %s %s already has version %s with another definition; a version never changes: create a new one (omit --version for the next)", s.noun, om.Name, om.Version)}
			}
			out = old
			return nil
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		// Who and when are the server's to say, not the request's.
		m.CreatedBy, m.CreatedOn, m.Archived = createdBy, time.Time{}, false
		a.SetAssetMeta(m)
		if err := tx.InsertAsset(a); err != nil {
			return err
		}
		out, created = a, true
		return nil
	}()
	if err != nil {
		return zero, false, err
	}
	return out, created, nil
}

// List returns a workspace's versions (of one name when f.Name is set),
// by name, newest first; archived ones only when asked.
func (s *Service[T]) List(ctx context.Context, f asset.AssetFilter) (out []T, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if err := workspaceExists(tx, f.Workspace); err != nil {
			return err
		}
		out, err = asset.ListAssetVersions[T](tx, f)
		return err
	})
	return out, err
}

// Get returns one version, or with label latest the newest that is not
// archived.
func (s *Service[T]) Get(ctx context.Context, workspace, name, version, label string) (out T, err error) {
	switch {
	case version != "" && label != "":
		return out, core.FieldErrorf("label", "give a version or a label, not both")
	case version == "" && label == "":
		return out, core.FieldErrorf("version", "is required: give a version (--version 3) or the label latest (--label latest)")
	case label != "" && !strings.EqualFold(label, asset.LabelLatest):
		return out, core.FieldErrorf("label", "%q is not a label: the only label is latest", label)
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		if err := workspaceExists(tx, workspace); err != nil {
			return err
		}
		if label != "" {
			out, err = asset.LatestAssetVersion[T](tx, workspace, name)
		} else {
			out, err = asset.GetAssetVersion[T](tx, workspace, name, version)
		}
		return err
	})
	return out, err
}

// Archive archives (archived true) or restores one version, or every
// version of name when version is "", and returns the versions as they
// are now. An archived version leaves lists and @latest; jobs and
// pipelines that name it by its version still run it, as in Azure.
func (s *Service[T]) Archive(ctx context.Context, workspace, name, version string, archived bool) (out []T, err error) {
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if err := workspaceExists(tx, workspace); err != nil {
			return err
		}
		if err := tx.SetAssetArchived(s.noun, workspace, name, version, archived); err != nil {
			return err
		}
		if version != "" {
			a, err := asset.GetAssetVersion[T](tx, workspace, name, version)
			out = []T{a}
			return err
		}
		out, err = asset.ListAssetVersions[T](tx, asset.AssetFilter{Workspace: workspace, Name: name, Archived: true})
		return err
	})
	return out, err
}

func workspaceExists(tx store.Tx, workspace string) error {
	if _, err := tx.GetWorkspace(workspace); core.ErrorCode(err) == core.ENOTFOUND {
		return core.Errorf(core.ENOTFOUND, "workspace %q not found", workspace)
	} else if err != nil {
		return err
	}
	return nil
}

var (
	_ asset.AssetService[*asset.Environment] = (*Service[*asset.Environment])(nil)
	_ asset.AssetService[*job.Component]     = (*Service[*job.Component])(nil)
	_ asset.AssetService[*asset.Data]        = (*Service[*asset.Data])(nil)
	_ asset.AssetService[*asset.Model]       = (*Service[*asset.Model])(nil)
)

package jobdata

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/service/datastores"
	"github.com/shoal-ml/shoal/store"
)

// A job's remote inputs (registered data assets and models, datastore
// URIs) are checked when it is submitted, so that a job naming a version
// or a datastore that does not exist is refused naming the field rather
// than failing later on a node; an asset reference is resolved to its
// version then (@latest included) and recorded on the input, so that
// `job show` tells which version the job got and every attempt reads
// that one.

// ResolveInputAssets checks inputs' remote paths in workspace and records
// on each asset reference the version it resolves to (JobInput.Asset).
// prefix is the inputs' field ("inputs", "jobs.<step>.inputs").
func ResolveInputAssets(tx store.Tx, workspace, prefix string, inputs map[string]*job.JobInput) error {
	for _, name := range core.SortedKeys(inputs) {
		in := inputs[name]
		if in == nil {
			continue
		}
		in.Asset = "" // the server's to say, never the request's
		if in.Path == "" || !jobio.IsPathType(in.Type) {
			continue
		}
		field := prefix + "." + name + ".path"
		switch jobio.PathKind(in.Path) {
		case jobio.AssetRef:
			a, err := lookupInputAsset(tx, workspace, field, in)
			if err != nil {
				return err
			}
			in.Asset = a.Name + ":" + a.Version
			if err := checkDataPlace(tx, workspace, field, a.Path); err != nil {
				return err
			}
		case jobio.DatastoreURI:
			if err := checkDataPlace(tx, workspace, field, in.Path); err != nil {
				return err
			}
		}
	}
	return nil
}

// inputAsset is the version of a data asset or model an input names.
type inputAsset struct {
	// Kind is asset.AssetData or asset.AssetModel.
	Kind          asset.AssetKind
	Name, Version string
	Type, Path    string
}

// assetNoun names an asset kind in messages, as users say it.
func assetNoun(k asset.AssetKind) string {
	if k == asset.AssetModel {
		return "model"
	}
	return "data asset"
}

// assetCommand is the CLI noun of an asset kind (`shoal data list`).
func assetCommand(k asset.AssetKind) string {
	if k == asset.AssetModel {
		return "model"
	}
	return "data"
}

// lookupInputAsset finds the version in's asset reference names: a model
// for a model-typed input, a data asset for the others; by version
// (archived ones too, as Azure runs them) or the newest that is not
// archived for @latest. Its type must fit the input's.
func lookupInputAsset(tx store.Tx, workspace, field string, in *job.JobInput) (*inputAsset, error) {
	u, err := asset.ParseDataURI(strings.TrimSpace(in.Path))
	if err != nil {
		return nil, refield(field, err)
	}
	if u.Kind != asset.URIAsset {
		return nil, core.FieldErrorf(field, "%q is not an asset reference: write azureml:<name>:<version> or azureml:<name>@latest", core.Short(in.Path))
	}
	kind := asset.AssetData
	if jobio.IsModelType(in.Type) {
		kind = asset.AssetModel
	}
	// The long forms say which kind they name ("data" or "model").
	if named := asset.AssetKind(u.AssetType); named != "" && named != kind {
		return nil, core.FieldErrorf(field, "%q names a %s, but input type %s takes a %s: a model input (custom_model, mlflow_model, triton_model) comes from a model, any other from a data asset", core.Short(in.Path), assetNoun(named), in.Type, assetNoun(kind))
	}
	var got inputAsset
	got.Kind = kind
	switch kind {
	case asset.AssetModel:
		m, err := getVersion[*asset.Model](tx, workspace, field, u)
		if err != nil {
			return nil, err
		}
		got.Name, got.Version, got.Type, got.Path = m.Name, m.Version, m.Type, m.Path
		if in.Type != jobio.TypeCustomModel && m.Type != in.Type {
			return nil, core.FieldErrorf(field, "model %s:%s is a %s, which a %s input does not take (a custom_model input takes any model)", m.Name, m.Version, m.Type, in.Type)
		}
	default:
		d, err := getVersion[*asset.Data](tx, workspace, field, u)
		if err != nil {
			return nil, err
		}
		got.Name, got.Version, got.Type, got.Path = d.Name, d.Version, d.Type, d.Path
		if d.Type != in.Type {
			return nil, core.FieldErrorf(field, "data asset %s:%s is a %s, which a %s input does not take: give the input type %s", d.Name, d.Version, d.Type, in.Type, d.Type)
		}
	}
	return &got, nil
}

// getVersion reads the version u names (ENOTFOUND naming the field and
// what is missing).
func getVersion[T asset.Asset](tx store.Tx, workspace, field string, u asset.DataURI) (T, error) {
	var a T
	var err error
	kind := asset.KindOf[T]()
	what := assetNoun(kind)
	if u.Label != "" {
		a, err = asset.LatestAssetVersion[T](tx, workspace, u.Name)
	} else {
		a, err = asset.GetAssetVersion[T](tx, workspace, u.Name, u.Version)
	}
	if core.ErrorCode(err) != core.ENOTFOUND {
		return a, err
	}
	all, lerr := asset.ListAssetVersions[T](tx, asset.AssetFilter{Workspace: workspace, Name: u.Name, Archived: true})
	if lerr != nil {
		return a, lerr
	}
	var msg string
	switch {
	case len(all) == 0:
		msg = fmt.Sprintf("%s %q is not in workspace %s; see `shoal %s list`", what, u.Name, workspace, assetCommand(kind))
	case u.Label != "":
		msg = fmt.Sprintf("%s %q has no version that is not archived, so @latest names none; name a version (azureml:%s:<version>)", what, u.Name, u.Name)
	default:
		msg = fmt.Sprintf("%s %q has no version %s", what, u.Name, u.Version)
	}
	return a, &core.Error{Code: core.ENOTFOUND, Field: field, Message: field + ": " + msg}
}

// checkDataPlace refuses a path naming a datastore the workspace does not
// have (the datastore of an asset's path included: it may have been
// deleted since the asset was registered).
func checkDataPlace(tx store.Tx, workspace, field, p string) error {
	u, err := asset.ParseDataURI(strings.TrimSpace(p))
	if err != nil {
		return refield(field, err)
	}
	if u.Kind != asset.URIDatastore {
		return nil
	}
	// Before the built-in datastores' pass: workspaceblobstore of
	// another workspace is not this one's (the dispatch refuses it too,
	// but the job would wait in the queue for that).
	if u.Workspace != "" && !strings.EqualFold(u.Workspace, workspace) {
		return core.FieldErrorf(field, "%q names workspace %s: a job reads the datastores of its own workspace (%s)", core.Short(p), u.Workspace, workspace)
	}
	if asset.IsBuiltinDatastore(u.Datastore) {
		return nil
	}
	// Existence only: nothing is unsealed here (a nil key opens
	// nothing, and no credential is needed to know the name).
	if _, _, _, err := datastores.ForURI(tx, nil, workspace, u); core.ErrorCode(err) == core.ENOTFOUND {
		return &core.Error{Code: core.ENOTFOUND, Field: field, Message: field + ": " + core.ErrorMessage(err)}
	}
	return nil
}

// refield puts field in place of the "path" that asset.ParseDataURI's
// errors name, keeping their rule.
func refield(field string, err error) error {
	msg := strings.TrimPrefix(core.ErrorMessage(err), "path: ")
	return core.FieldErrorf(field, "%s", msg)
}

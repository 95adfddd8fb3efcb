package dataassets

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/service/jobdata"
	"github.com/shoal-ml/shoal/store"
)

// maxJobHops bounds how many job output URIs ResolveJobPath follows (a
// pipeline's output is bound to its step's, which is a place).
const maxJobHops = 4

// ResolveJobPath turns a path written as a job output URI
// (azureml://jobs/<job>/outputs/<output>/paths/<p>) into the datastore
// path where that job of workspace keeps the output (its artifacts for
// the output "artifacts"), so that a data asset or model registered
// from a job's output names a place its readers find. Any other path is
// returned as it is. The job is looked up in workspace only: a URI never
// reaches another workspace's jobs. field names the path in errors.
func ResolveJobPath(ctx context.Context, st store.Store, workspace, field, p string) (string, error) {
	if !asset.IsJobOutputURI(p) {
		return p, nil
	}
	var out string
	err := st.View(ctx, func(tx store.Tx) error {
		var err error
		out, err = resolveJobPathTx(tx, workspace, field, p)
		return err
	})
	return out, err
}

// resolveJobPathTx is ResolveJobPath in tx.
func resolveJobPathTx(tx store.Tx, workspace, field, p string) (string, error) {
	for hop := 0; hop < maxJobHops && asset.IsJobOutputURI(p); hop++ {
		u, err := asset.ParseJobOutputURI(field, p)
		if err != nil {
			return "", err
		}
		j, err := tx.GetJob(workspace, u.Job)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return "", core.FieldErrorf(field, "%q names job %s, which workspace %s does not hold", core.Short(p), core.Short(u.Job), workspace)
		}
		if err != nil {
			return "", err
		}
		base, err := jobOutputPlace(field, j, u.Output)
		if err != nil {
			return "", err
		}
		if u.Path == "" {
			p = base
			continue
		}
		if !strings.HasSuffix(base, "/") {
			return "", core.FieldErrorf(field, "output %s of job %s is a file (%s): name it without paths/", u.Output, j.Name, core.Short(base))
		}
		p = base + u.Path
	}
	if asset.IsJobOutputURI(p) {
		return "", core.FieldErrorf(field, "%q: job outputs bound to other jobs' outputs more than %d deep", core.Short(p), maxJobHops)
	}
	return p, nil
}

// jobOutputPlace is where job j keeps its output name: the path it
// declared (placeholders expanded; Azure's default under
// workspaceblobstore when it declared none), or for "artifacts", unless
// the job declared an output of that name, its artifacts.
func jobOutputPlace(field string, j *job.Job, name string) (string, error) {
	o, ok := j.Outputs[name]
	if name == job.ArtifactsOutput && (!ok || job.IsKeptArtifacts(j.Name, name, o)) {
		return job.ArtifactsPath(j.Name), nil
	}
	if !ok || o == nil {
		names := core.SortedKeys(j.Outputs)
		return "", core.FieldErrorf(field, "job %s has no output %s (its outputs: %s; artifacts is what it wrote under ./outputs and ./logs)", j.Name, core.Short(name), strings.Join(names, ", "))
	}
	p := jobio.ExpandOutputPath(o.Path, j.Name, name)
	// On Shoal's own datastores an output is kept as the job's, at
	// azureml/<job>/<output>/, whatever path it declared there (as
	// service/joboutputs registers it): name the place readers find.
	if u, err := asset.ParseDataURI(p); err == nil && u.Kind == asset.URIDatastore && asset.IsBuiltinDatastore(u.Datastore) {
		if src, err := jobdata.ShoalSource(u.Datastore, u); err != nil || src.OutputOf != j.Name || src.Output != name {
			return jobio.ExpandOutputPath("", j.Name, name), nil
		}
	}
	return p, nil
}

// NormalizeWithJobPaths is normalize preceded by ResolveJobPath on the
// path field of a version (pathOf gives it), for the kinds whose path
// may name a job's output: data assets and models.
func NormalizeWithJobPaths[T asset.Asset](st store.Store, normalize func(T) error, pathOf func(T) *string) func(T) error {
	return func(a T) error {
		p := pathOf(a)
		resolved, err := ResolveJobPath(context.Background(), st, a.AssetMeta().Workspace, "path", *p)
		if err != nil {
			return err
		}
		*p = resolved
		return normalize(a)
	}
}

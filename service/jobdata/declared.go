package jobdata

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Azure's notebooks let a job write an output at a path of their choosing
// on workspaceblobstore (distributed-cifar10: .../paths/CIFAR-10) and the
// next job read that path. Shoal keeps such an output as the job's own
// (azureml/<job>/<output>/), so a read of the declared path is a read of
// the newest completed job of the workspace that declared it there.

// maxDeclaredScan bounds how many of the workspace's newest completed
// jobs declaredOutputSource looks through: it runs only for a path that
// nothing else on workspaceblobstore holds.
const maxDeclaredScan = 1000

// declaredOutputSource is the kept output of the newest completed job of
// workspace whose output was declared at u's place on Shoal's datastore
// u.Datastore (or at a folder holding it); notFound when there is none.
func declaredOutputSource(tx store.Tx, workspace string, u asset.DataURI, notFound error) (*node.DataSource, error) {
	want := strings.Trim(u.Path, "/")
	if want == "" {
		return nil, notFound
	}
	jobs, err := tx.ListJobs(job.JobFilter{Workspace: workspace, Statuses: []string{job.JobCompleted}, Limit: maxDeclaredScan})
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		for _, name := range core.SortedKeys(j.Outputs) {
			o := j.Outputs[name]
			if o == nil || o.Path == "" || job.IsKeptArtifacts(j.Name, name, o) {
				continue
			}
			d, err := asset.ParseDataURI(jobio.ExpandOutputPath(o.Path, j.Name, name))
			if err != nil || d.Kind != asset.URIDatastore || !strings.EqualFold(d.Datastore, u.Datastore) ||
				d.Workspace != "" && !strings.EqualFold(d.Workspace, workspace) {
				continue
			}
			base := strings.Trim(d.Path, "/")
			if base == "" || want != base && !strings.HasPrefix(want, base+"/") {
				continue
			}
			return &node.DataSource{Kind: node.DataShoal, URI: u.Raw, Datastore: u.Datastore, OutputOf: j.Name, Output: name,
				Prefix: strings.TrimPrefix(strings.TrimPrefix(want, base), "/")}, nil
		}
	}
	return nil, notFound
}

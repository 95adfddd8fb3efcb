// Package joboutputs is what Shoal does with a job's outputs: it
// registers the named ones as data assets or models when the job
// completes (Outputs.CompleteWith), and opens the kept outputs of a
// rank, or a pipeline's output as its step's (Outputs.Open).
package joboutputs

import (
	"fmt"

	"github.com/shoal-ml/shoal/service/jobdata"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/models"
	"github.com/shoal-ml/shoal/store"
)

// An output with name: (and optionally version:) is registered when its
// job completes, as Azure registers it: a data asset for uri_file,
// uri_folder and mltable outputs, a model for the model types, at the
// output's datastore path, created by the job's submitter. It is done in
// the transaction that completes the job, so that a job is Completed
// only with its outputs registered; a registration that is refused (a
// version that exists with another path) fails the job with the
// registry's words, as Azure fails it.

// registerOutputs registers j's named outputs, all or none: each is
// first registered on a dry run over tx (registerDryRun keeps the new
// versions in memory), and only when every one would be accepted are
// they registered for real; a job failed by a refused registration
// leaves no version behind. The error is the refusal's words, naming
// the output.
func (s *Outputs) registerOutputs(tx store.Tx, j *job.Job) ([]string, error) {
	if _, err := s.registerEach(&registerDryRun{Tx: tx}, j); err != nil {
		return nil, err
	}
	return s.registerEach(tx, j)
}

// registerEach registers j's named outputs one after another in tx.
func (s *Outputs) registerEach(tx store.Tx, j *job.Job) ([]string, error) {
	var done []string
	for _, name := range core.SortedKeys(j.Outputs) {
		o := j.Outputs[name]
		if o == nil || o.Name == "" || job.IsKeptArtifacts(j.Name, name, o) {
			continue
		}
		path := registeredPath(j.Name, name, jobio.ExpandOutputPath(o.Path, j.Name, name))
		typ := o.Type
		if typ == "" {
			typ = jobio.TypeURIFolder
		}
		var err error
		var got string
		if jobio.IsModelType(typ) {
			m := &asset.Model{Workspace: j.Workspace, Name: o.Name, Version: o.Version, Type: typ, Path: path,
				Description: "output " + name + " of job " + j.Name}
			var out *asset.Model
			out, _, err = models.New(models.Config{Store: s.Store, Artifacts: s.Files}).CreateTx(tx, m, j.CreatedBy)
			if err == nil {
				got = "model " + out.Name + ":" + out.Version
			}
		} else {
			d := &asset.Data{Workspace: j.Workspace, Name: o.Name, Version: o.Version, Type: typ, Path: path,
				Description: "output " + name + " of job " + j.Name}
			var out *asset.Data
			out, _, err = dataassets.New(dataassets.Config{Store: s.Store, Artifacts: s.Files}).CreateTx(tx, d, j.CreatedBy)
			if err == nil {
				got = "data asset " + out.Name + ":" + out.Version
			}
		}
		if err != nil {
			return done, fmt.Errorf("output %s could not be registered as %s: %s", name, core.Short(o.Name+":"+o.Version), core.ErrorMessage(err))
		}
		done = append(done, "output "+name+" registered as "+got+" ("+path+")")
	}
	return done, nil
}

// codeRegistered is the job event of an output registered on completion.
const codeRegistered jobrun.Code = "output_registered"

// CompleteWith registers the outputs of a job the step out has
// just completed; a refusal turns the completion into a failure with
// its words (the events say so instead of "completed").
func (s *Outputs) CompleteWith(tx store.Tx, before string, j *job.Job, out *jobrun.Output) {
	if before == job.JobCompleted || j.Status != job.JobCompleted {
		return
	}
	done, err := s.registerOutputs(tx, j)
	for _, d := range done {
		out.Events = append(out.Events, jobrun.JobEvent{Code: codeRegistered, Reason: d})
	}
	if err == nil {
		return
	}
	j.Status, j.StatusReason, j.Error, j.ExitCode = job.JobFailed, "failed: "+err.Error(), err.Error(), nil
	for i, e := range out.Events {
		if e.Code == jobrun.CodeCompleted {
			out.Events[i] = jobrun.JobEvent{Code: jobrun.CodeFailed, Reason: err.Error()}
		}
	}
}

// registeredPath is where an output registered from a job is read back:
// its path, unless that is a place on Shoal's own datastores where Shoal
// keeps nothing (workspaceblobstore/paths/models/x/): an output Shoal
// keeps is kept as the job's output, so the version is registered at
// the place that reads it, azureml/<job>/<output>/.
func registeredPath(jobName, output, path string) string {
	u, err := asset.ParseDataURI(path)
	if err != nil || u.Kind != asset.URIDatastore || !asset.IsBuiltinDatastore(u.Datastore) {
		return path
	}
	if src, err := jobdata.ShoalSource(u.Datastore, u); err == nil && src.OutputOf == jobName && src.Output == output {
		return path
	}
	return jobio.ExpandOutputPath("", jobName, output)
}

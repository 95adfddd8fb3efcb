package service

import (
	"context"
	"io"

	"github.com/shoal-ml/shoal/service/jobdata"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/service/blobs"
	"github.com/shoal-ml/shoal/store"
)

// An input on Shoal's own file store is read by the agent through the
// agent API: an upload as any artifact (OpenArtifactForNode, which
// allows the uploads InputArtifacts lists), another job's kept output
// through OpenInputForNode. Both are scoped as the task is: only what
// the node's current rank's job names, of that job's workspace.

// ShoalInputs returns the inputs of j that are on Shoal's own file store,
// by name, resolved as the task resolves them (no credential is opened:
// the built-in datastores have none). An input that does not resolve is
// left out: the task fails the job for it.
func ShoalInputs(tx store.Tx, j *job.Job) map[string]*node.DataSource {
	out := map[string]*node.DataSource{}
	for name, in := range j.Inputs {
		if in == nil || in.Path == "" || !jobio.IsPathType(in.Type) || !jobio.PathKind(in.Path).Remote() {
			continue
		}
		if src, err := jobdata.InputSource(tx, nil, j.Workspace, in); err == nil && src.Kind == node.DataShoal {
			out[name] = src
		}
	}
	return out
}

// InputArtifacts lists the uploads j's remote inputs stand for (a data
// asset registered from a local folder), which its node may read.
func (s *Services) InputArtifacts(tx store.Tx, j *job.Job) []string {
	var ids []string
	for _, src := range ShoalInputs(tx, j) {
		if src.Artifact != "" {
			ids = append(ids, src.Artifact)
		}
	}
	return ids
}

// OpenInputForNode opens, for the node running rank of attemptID, the
// kept output that input of the rank's job reads (a data asset or a
// datastore path naming azureml/<job>/<output>/ on workspaceblobstore, or
// a job's artifacts): the output's archive as `job download` gets it. It
// is refused unless the rank is the node's and its attempt the job's
// current one, and the output is of a job of the same workspace.
func (s *Services) OpenInputForNode(ctx context.Context, nodeID, attemptID string, rank int, input string) (io.ReadCloser, error) {
	var src *node.DataSource
	var workspace string
	err := s.store.View(ctx, func(tx store.Tx) error {
		w, err := agentapi.LoadRankWork(tx, nodeID, attemptID, rank)
		if err != nil {
			return err
		}
		if w.Job.CurrentAttemptID != w.Attempt.ID || job.AttemptTerminal(w.Rank.Status) {
			return core.Errorf(core.EFORBIDDEN, "attempt %s of job %s is no longer current", attemptID, w.Job.Name)
		}
		workspace = w.Job.Workspace
		src = ShoalInputs(tx, w.Job)[input]
		return nil
	})
	if err != nil {
		return nil, err
	}
	if src != nil && src.OutputOf == "" && src.Artifact == "" && src.Container != "" {
		return s.openUploadedInput(ctx, workspace, src)
	}
	if src == nil || src.OutputOf == "" {
		return nil, core.Errorf(core.ENOTFOUND, "the job of attempt %s has no input %q that is a job's kept output", attemptID, core.Short(input))
	}
	f, err := s.OpenJobOutputs(ctx, workspace, src.OutputOf, 0, src.Output)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openUploadedInput streams, as one tar.gz, the blobs of a place that
// Azure's clients uploaded to workspaceblobstore (jobdata's
// uploadedSource): the one file, or the folder's files.
func (s *Services) openUploadedInput(ctx context.Context, workspace string, src *node.DataSource) (io.ReadCloser, error) {
	list, base, err := blobs.PlaceBlobs(ctx, s.store, workspace, src.Container, src.Prefix)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, core.Errorf(core.ENOTFOUND, "%s holds nothing any more", core.Short(src.URI))
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(blobs.Pack(s.cfg.Files, workspace, base, list, pw)) }()
	return pr, nil
}

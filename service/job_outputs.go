package service

import (
	"context"

	"github.com/shoal-ml/shoal/service/joboutputs"
)

// JobOutputs is an open output archive of a job, for download.
type JobOutputs = joboutputs.Archive

// OpenJobOutputs opens what rank of job name left, or one of its outputs
// (joboutputs.Outputs.Open).
func (s *Services) OpenJobOutputs(ctx context.Context, workspace, name string, rank int, output string) (*JobOutputs, error) {
	return s.outputs.Open(ctx, workspace, name, rank, output)
}

package parallel_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/service/parallel"
)

// A parallel job's input_data in mode direct (as Azure's examples write
// their tables) reaches its ranks mounted, since the driver lists its
// files; its other inputs keep their modes, and the job's own map is
// not changed.
func TestInputDataInModeDirectIsMounted(t *testing.T) {
	direct := &job.JobInput{Type: "mltable", Path: "azureml://datastores/workspaceblobstore/paths/t/", Mode: jobio.ModeDirect}
	model := &job.JobInput{Type: "uri_folder", Path: "azureml://datastores/workspaceblobstore/paths/m/", Mode: jobio.ModeDirect}
	j := &job.Job{JobSpec: job.JobSpec{Inputs: map[string]*job.JobInput{"data": direct, "model": model},
		Parallel: &job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: "score.py"}}}
	got := parallel.Inputs(j)
	if got["data"].InputMode() != jobio.ModeROMount || got["model"].InputMode() != jobio.ModeDirect {
		t.Errorf("modes data %s, model %s; want ro_mount and direct", got["data"].Mode, got["model"].Mode)
	}
	if j.Inputs["data"].Mode != jobio.ModeDirect {
		t.Errorf("the job's own input_data became %q", j.Inputs["data"].Mode)
	}
	j.Parallel = nil
	if got := parallel.Inputs(j); got["data"].Mode != jobio.ModeDirect {
		t.Errorf("a job that is not parallel: data mode %q, want its own", got["data"].Mode)
	}
}

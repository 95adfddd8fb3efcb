package parallel

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/internal/sealing"
)

// Task is what a rank of attempt attemptID of j needs to run Shoal's
// driver: nil unless j is a parallel job. Its token is derived, not
// stored (every sync hands the same one); with no secrets key it is
// empty and the ledger refuses the driver, which says so.
func Task(key *sealing.Key, attemptID string, j *job.Job) *node.ParallelTask {
	if j.Parallel == nil {
		return nil
	}
	t := &node.ParallelTask{Spec: *j.Parallel, Path: pproto.PathPrefix + attemptID}
	if key != nil {
		t.Token = Token(key, attemptID)
	}
	if in := j.Inputs[InputName(j.Parallel.InputData)]; in != nil {
		t.InputType = in.Type
	}
	return t
}

// InputName is the input a reference such as input_data's
// "${{inputs.data}}" names ("data"); a bare name is its own.
func InputName(ref string) string {
	s := strings.TrimSpace(ref)
	if inner, ok := strings.CutPrefix(s, "${{"); ok {
		inner, _ = strings.CutSuffix(inner, "}}")
		s = strings.TrimSpace(inner)
	}
	return strings.TrimPrefix(s, "inputs.")
}

// Inputs are a parallel job's inputs as its ranks get them. The driver
// lists input_data's files itself, so an input_data given in mode direct
// (Azure's parallel run reads the URI with its own libraries, and Azure's
// examples write mode: direct for their tables) is mounted read-only
// instead; every other input is the job's own. The job's map is never
// changed: the copy is the task's.
func Inputs(j *job.Job) map[string]*job.JobInput {
	if j.Parallel == nil {
		return j.Inputs
	}
	name := InputName(j.Parallel.InputData)
	in := j.Inputs[name]
	if in == nil || in.InputMode() != jobio.ModeDirect {
		return j.Inputs
	}
	out := make(map[string]*job.JobInput, len(j.Inputs))
	for k, v := range j.Inputs {
		out[k] = v
	}
	c := *in
	c.Mode = jobio.ModeROMount
	out[name] = &c
	return out
}

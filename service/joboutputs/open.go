package joboutputs

import (
	"context"
	"io"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/store"
)

// Outputs registers and opens jobs' outputs.
type Outputs struct {
	// Store is where registered versions are written.
	Store store.Store
	// Files keeps the jobs' outputs; nil: none can be opened.
	Files store.Files
	// Find returns a job its caller may read.
	Find func(ctx context.Context, workspace, name string) (*job.Job, error)
}

// Archive is an open output archive of a job, for download.
type Archive struct {
	io.ReadCloser
	// Job is the job whose rank left it (a pipeline's step's job for a
	// pipeline's output) and Attempt the attempt.
	Job     string
	Attempt int
}

// Open opens what rank of job name left, from its newest
// attempt that left outputs: the whole archive (a folder per output,
// the artifacts among them) when output is "", else that output's folder
// alone as an archive of its own. A pipeline's outputs are its steps':
// output names one of the pipeline's outputs and is read from the step
// that binds it (rank 0 of that step's job); a pipeline has no archive of
// its own, so output is required.
func (s *Outputs) Open(ctx context.Context, workspace, name string, rank int, output string) (*Archive, error) {
	j, err := s.Find(ctx, workspace, name)
	if err != nil {
		return nil, err
	}
	if j.Pipeline != nil {
		return s.openPipelineOutput(ctx, j, output)
	}
	if output != "" {
		if _, ok := j.Outputs[output]; !ok {
			return nil, noSuchOutput(j, output)
		}
	}
	return s.openRankOutputs(j, rank, output)
}

// openRankOutputs opens the archive rank of command job j left (its
// output's folder alone when output is set).
func (s *Outputs) openRankOutputs(j *job.Job, rank int, output string) (*Archive, error) {
	if s.Files == nil {
		return nil, core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	for att := j.AttemptCount; att >= 1; att-- {
		f, err := s.Files.OpenOutputs(j.Workspace, j.Name, att, rank)
		if err != nil {
			continue
		}
		if output == "" {
			return &Archive{ReadCloser: f, Job: j.Name, Attempt: att}, nil
		}
		pr, pw := io.Pipe()
		go func() {
			// A folder the rank left empty, or a rank that wrote none
			// of it (rank 1 of a job whose rank 0 writes the output),
			// is an empty archive.
			_, err := archive.Subtree(pw, f, output)
			f.Close()
			pw.CloseWithError(err)
		}()
		return &Archive{ReadCloser: pr, Job: j.Name, Attempt: att}, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "job %s has no outputs for rank %d (yet)", j.Name, rank)
}

// openPipelineOutput opens pipeline p's output: the folder of the step
// output it is bound to, from that step's job.
func (s *Outputs) openPipelineOutput(ctx context.Context, p *job.Job, output string) (*Archive, error) {
	if output == "" {
		return nil, core.FieldErrorf("output", "job %s is a pipeline: its outputs are its steps'; name one of its outputs (%s), or download its steps' jobs",
			p.Name, outputNames(p))
	}
	if _, ok := p.Outputs[output]; !ok {
		return nil, noSuchOutput(p, output)
	}
	g, err := pipelinejob.NewPipelineGraph(p.Pipeline)
	if err != nil {
		return nil, err
	}
	src, ok := g.OutputSources()[output]
	if !ok {
		return nil, core.Errorf(core.ENOTFOUND, "output %s of pipeline %s is bound to no step's output, so nothing writes it", output, p.Name)
	}
	child, err := s.Find(ctx, p.Workspace, job.PipelineChildName(p.Name, src.Step))
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "output %s of pipeline %s is step %s's output %s, and that step has not run (yet)", output, p.Name, src.Step, src.Output)
	} else if err != nil {
		return nil, err
	}
	if child.Status != job.JobCompleted {
		return nil, core.Errorf(core.ENOTFOUND, "output %s of pipeline %s is step %s's output %s, and that step is %s, not Completed", output, p.Name, src.Step, src.Output, child.Status)
	}
	return s.openRankOutputs(child, 0, src.Output)
}

// noSuchOutput is the answer for an output a job does not have.
func noSuchOutput(j *job.Job, output string) error {
	e := core.Errorf(core.ENOTFOUND, "output: job %s has no output %q; its outputs: %s", j.Name, core.Short(output), outputNames(j))
	e.Field = "output"
	return e
}

// outputNames lists j's outputs for messages.
func outputNames(j *job.Job) string {
	if len(j.Outputs) == 0 {
		return "none"
	}
	return strings.Join(core.SortedKeys(j.Outputs), ", ")
}

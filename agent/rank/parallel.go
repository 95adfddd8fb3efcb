package rank

import (
	"path/filepath"

	"github.com/shoal-ml/shoal/agent/parallel"
	"github.com/shoal-ml/shoal/domain/node"
)

// prepareParallel writes Shoal's driver for a rank of a parallel job and
// returns the variables that run it (job.ParallelDriverEnv, and the
// driver's task: the ledger's URL and token, the settings, where the
// input and outputs are). Nothing for any other job.
func (r *Rank) prepareParallel(outDir string) (map[string]string, error) {
	t := r.t
	if t.Parallel == nil {
		return nil, nil
	}
	path, err := parallel.Write(r.dir)
	if err != nil {
		return nil, err
	}
	outputs := make(map[string]string, len(t.Outputs))
	for _, name := range t.Outputs {
		outputs[name] = outputPath(t, outDir, name)
	}
	task, err := parallel.NewTask(r.n.ServerURL, t, parallel.Paths{
		CodeDir: filepath.Join(r.dir, "code"), OutputsDir: outDir, Inputs: r.inputEnv, Outputs: outputs,
	})
	if err != nil {
		return nil, err
	}
	return parallel.Env(path, task)
}

// parallelMount is the driver's folder, read-only, for a container rank
// of a parallel job: the job's command runs the driver at the path the
// host has it.
func parallelMount(t *node.AgentTask, rankDir string) (string, bool) {
	if t.Parallel == nil {
		return "", false
	}
	return filepath.Join(rankDir, parallel.Dir), true
}

package parallel_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/parallel"
	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// rankRun is one rank of a parallel job, run with the real driver and
// Debian's python3 against a ledger double.
type rankRun struct {
	rank, nodes int
	spec        job.ParallelSpec
	inputType   string
	input       string
	code        map[string]string
	// outputs are the job's outputs; fileOutputs those of type uri_file
	// (their file's name).
	outputs     []string
	fileOutputs map[string]string
	args        []string
	// dir is the rank's folder (made by run when empty).
	dir string
	// env is added to the driver's environment.
	env map[string]string
	// inputs are the job's inputs besides "data" (its input_data), by
	// name: their local paths.
	inputs map[string]string
}

type rankResult struct {
	code   int
	out    string
	dir    string
	task   *parallel.Task
	outDir string
}

func python(t *testing.T) string { return testenv.Python3(t) }

func requirePandas(t *testing.T) {
	testenv.Require(t, "pandas for Debian's python3 (an mltable's rows reach run as a DataFrame)", func() error {
		return exec.Command("/usr/bin/python3", "-c", "import pandas").Run()
	}, "apt-get install python3-pandas")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the rank's driver to its end.
func (rr rankRun) run(t *testing.T, srvURL, token string) rankResult {
	t.Helper()
	// A guard against a driver that hangs, not a measure: every test's
	// driver ends in seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, res := rr.command(ctx, t, srvURL, token)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	res.out = out.String()
	return res
}

// command is the rank's driver, ready to start: its folders made, the
// driver written and its task in its environment.
func (rr rankRun) command(ctx context.Context, t *testing.T, srvURL, token string) (*exec.Cmd, rankResult) {
	t.Helper()
	py := python(t)
	dir := rr.dir
	if dir == "" {
		dir = t.TempDir()
	}
	codeDir, outDir := filepath.Join(dir, "code"), filepath.Join(dir, "outputs")
	writeFiles(t, codeDir, rr.code)
	if err := os.MkdirAll(filepath.Join(codeDir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, o := range rr.outputs {
		if err := os.MkdirAll(filepath.Join(outDir, o), 0o700); err != nil {
			t.Fatal(err)
		}
		outs[o] = filepath.Join(outDir, o)
		if f := rr.fileOutputs[o]; f != "" {
			outs[o] = filepath.Join(outDir, o, f)
		}
	}
	if rr.inputType == "" {
		rr.inputType = "uri_folder"
	}
	at := &node.AgentTask{RankRef: node.RankRef{Rank: rr.rank}, NodeCount: max(rr.nodes, 1), Outputs: rr.outputs, OutputFiles: rr.fileOutputs,
		Parallel: &node.ParallelTask{Spec: rr.spec, Path: paralleltest.Path, Token: token, InputType: rr.inputType}}
	inputs := map[string]string{"data": rr.input}
	for k, v := range rr.inputs {
		inputs[k] = v
	}
	task, err := parallel.NewTask(srvURL, at, parallel.Paths{CodeDir: codeDir, OutputsDir: outDir, Inputs: inputs, Outputs: outs})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := parallel.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := parallel.Env(drv, task)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, append([]string{drv}, rr.args...)...)
	cmd.Dir = codeDir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range rr.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, rankResult{dir: dir, task: task, outDir: outDir}
}

func spec(entry string) job.ParallelSpec {
	return job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: entry}
}

func intp(i int) *int { return &i }

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutPyYAML hides PyYAML from the driver, as an image without it
// has: the driver reads MLTable files with its own reader then.
func withoutPyYAML(t *testing.T) map[string]string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"yaml.py": "raise ImportError('no PyYAML in this image')\n"})
	return map[string]string{"PYTHONPATH": dir}
}

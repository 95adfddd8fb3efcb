package parallel_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/parallel"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// The driver is written readable by every account and writable by its
// owner only (the agent): the run-as account runs it and cannot change
// it. An earlier file (of an earlier run in the same folder) is replaced.
func TestWriteDriver(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"parallel/driver.py": "print('not shoal')"})
	p, err := parallel.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != string(parallel.Driver()) || !strings.Contains(string(b), "Shoal's parallel job driver") {
		t.Fatalf("driver: %v", err)
	}
	for path, want := range map[string]os.FileMode{p: 0o644, filepath.Dir(p): 0o755 | os.ModeDir} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", path, fi.Mode(), want, err)
		}
	}
}

func TestInputName(t *testing.T) {
	for in, want := range map[string]string{"${{inputs.data}}": "data", "${{ inputs.data }}": "data", "${{outputs.o}}": "o", "data": "data"} {
		if got := parallel.InputName(in); got != want {
			t.Errorf("InputName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The append file: a uri_file output's own file; in a uri_folder output
// the deployment's output_file_name, else Azure's parallel_run_step.txt;
// a name that is not a plain file name is refused naming the field.
func TestNewTaskAppendPath(t *testing.T) {
	base := func(file string) *node.AgentTask {
		return &node.AgentTask{Outputs: []string{"o"}, Parallel: &node.ParallelTask{Path: "/api/v1/parallel/a",
			Spec: job.ParallelSpec{InputData: "${{inputs.d}}", AppendRowTo: "${{outputs.o}}", AppendRowFile: file}}}
	}
	p := parallel.Paths{CodeDir: "/r/code", OutputsDir: "/r/outputs", Inputs: map[string]string{"d": "/in"},
		Outputs: map[string]string{"o": "/r/outputs/o"}}
	for file, want := range map[string]string{"": "/r/outputs/o/parallel_run_step.txt", "predictions.csv": "/r/outputs/o/predictions.csv"} {
		task, err := parallel.NewTask("http://s/", base(file), p)
		if err != nil || task.AppendPath != want || task.ErrorsPath != "/r/outputs/o/errors.txt" || task.URL != "http://s/api/v1/parallel/a" {
			t.Errorf("%q: %+v %v", file, task, err)
		}
	}
	for _, bad := range []string{"../x.csv", "a/b.csv", ".."} {
		if _, err := parallel.NewTask("http://s", base(bad), p); core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "output_file_name") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	file := parallel.Paths{CodeDir: "/r/code", OutputsDir: "/r/outputs", Inputs: p.Inputs, Outputs: map[string]string{"o": "/r/outputs/o/x.csv"}}
	if task, err := parallel.NewTask("http://s", base(""), file); err != nil || task.AppendPath != "/r/outputs/o/x.csv" {
		t.Errorf("uri_file: %+v %v", task, err)
	}
	withArtifacts := base("")
	withArtifacts.Outputs = []string{"o", job.ArtifactsOutput}
	if task, err := parallel.NewTask("http://s", withArtifacts, p); err != nil || strings.Join(task.Outputs, ",") != "o" {
		t.Errorf("the driver posts the artifacts output's files: %+v %v", task, err)
	}
	noModel := base("")
	noModel.Parallel.Spec.ModelInput = "model"
	if _, err := parallel.NewTask("http://s", noModel, p); core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "model:") {
		t.Errorf("a model input the job lacks: %v", err)
	}
	noOut := base("")
	noOut.Parallel.Spec.AppendRowTo = "${{outputs.nope}}"
	if _, err := parallel.NewTask("http://s", noOut, p); err == nil || !strings.Contains(err.Error(), "append_row_to") {
		t.Errorf("unknown output: %v", err)
	}
	noAppend := base("")
	noAppend.Parallel.Spec.AppendRowTo = ""
	if task, err := parallel.NewTask("http://s", noAppend, p); err != nil || task.AppendPath != "" || task.ErrorsPath != "/r/code/logs/errors.txt" {
		t.Errorf("summary only: %+v %v", task, err)
	}
}

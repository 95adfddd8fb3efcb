// Package parallel gives a parallel job's rank Shoal's driver: the Python
// program (driver.py, embedded in the agent) that splits the job's input
// into mini-batches, runs the entry script's init() and run(mini_batch)
// in worker processes and keeps the job's ledger on the server informed
// (domain/parallel has the protocol). The agent writes the driver into
// the rank's folder and tells it, through one environment variable, where
// the ledger is and what the job asked for.
package parallel

import (
	_ "embed"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

//go:embed driver.py
var driver []byte

// Driver is the driver's source, as the agent writes it.
func Driver() []byte { return driver }

// TaskEnv names the variable that carries the driver's Task as JSON. The
// driver removes it from its environment before it starts the entry
// script's workers: the ledger's token is the driver's, not the user
// code's.
const TaskEnv = "SHOAL_PARALLEL_TASK"

// Dir is the folder under a rank's folder that holds the driver.
const Dir = "parallel"

// Task is what the driver reads from TaskEnv.
type Task struct {
	// URL is the ledger's base URL: the agent's server URL + the task's
	// Path; Token its Bearer token (never logged).
	URL   string `json:"url"`
	Token string `json:"token"`
	// Rank is this rank; NodeCount how many the job has.
	Rank      int `json:"rank"`
	NodeCount int `json:"node_count"`
	// Spec is the job's parallel settings; InputType the type of the
	// input it splits, InputPath where that input is on this node.
	Spec      job.ParallelSpec `json:"spec"`
	InputType string           `json:"input_type"`
	InputPath string           `json:"input_path"`
	// CodeDir holds the entry script; OutputsDir the job's output
	// folders (one per name in Outputs), whose new files the driver
	// posts to the ledger; LogsDir is the job's ./logs.
	CodeDir    string   `json:"code_dir"`
	OutputsDir string   `json:"outputs_dir"`
	Outputs    []string `json:"outputs"`
	LogsDir    string   `json:"logs_dir"`
	// AppendPath is the file rank 0 writes the rows to (empty: rows are
	// not kept); ErrorsPath the file it lists failed items in.
	AppendPath string `json:"append_path,omitempty"`
	ErrorsPath string `json:"errors_path"`
	// ModelDir is the model input's folder (AZUREML_MODEL_DIR), if any.
	ModelDir string `json:"model_dir,omitempty"`
	// OutputDir is the folder Azure's batch scoring scripts write their
	// own files to (AZUREML_BI_OUTPUT_PATH): the append file's folder,
	// else the job's only output's; empty when neither is.
	OutputDir string `json:"output_dir,omitempty"`
}

// InputName is the input name a ParallelSpec's InputData or AppendRowTo
// refers to: "${{inputs.x}}" → "x" (a bare name is taken as is).
func InputName(ref string) string {
	s := strings.TrimSpace(ref)
	if in, ok := strings.CutPrefix(s, "${{"); ok {
		if in, ok = strings.CutSuffix(in, "}}"); ok {
			s = strings.TrimSpace(in)
		}
	}
	for _, p := range []string{"inputs.", "outputs."} {
		if n, ok := strings.CutPrefix(s, p); ok {
			return n
		}
	}
	return s
}

// Paths is where a rank's files are, for NewTask: the rank's folders and
// what each input's and output's reference became on this node.
type Paths struct {
	CodeDir, OutputsDir string
	// Inputs maps an input's name to its local path; Outputs an output's
	// name to its local path (a uri_file output's file).
	Inputs, Outputs map[string]string
}

// NewTask is the driver's task of rank t on a node whose server is at
// serverURL. An input_data or append_row_to naming no input or output
// the rank has is the job's error, naming the field.
func NewTask(serverURL string, t *node.AgentTask, p Paths) (*Task, error) {
	pt := t.Parallel
	if pt == nil {
		return nil, errors.New("not a parallel job")
	}
	name := InputName(pt.Spec.InputData)
	in, ok := p.Inputs[name]
	if !ok {
		return nil, core.FieldErrorf("input_data", "%q names no input of the job", pt.Spec.InputData)
	}
	logs := filepath.Join(p.CodeDir, "logs")
	task := &Task{
		URL: strings.TrimRight(serverURL, "/") + pt.Path, Token: pt.Token,
		Rank: t.Rank, NodeCount: max(t.NodeCount, 1), Spec: pt.Spec, InputType: pt.InputType, InputPath: in,
		CodeDir: p.CodeDir, OutputsDir: p.OutputsDir, Outputs: postedOutputs(t.Outputs), LogsDir: logs,
		ErrorsPath: filepath.Join(logs, "errors.txt"),
	}
	if m := pt.Spec.ModelInput; m != "" {
		if task.ModelDir, ok = p.Inputs[m]; !ok {
			return nil, core.FieldErrorf("model", "the model input %q is not an input of the job", m)
		}
	}
	if ref := pt.Spec.AppendRowTo; ref != "" {
		out := InputName(ref)
		local, ok := p.Outputs[out]
		if !ok {
			return nil, core.FieldErrorf("append_row_to", "%q names no output of the job", ref)
		}
		folder := filepath.Join(p.OutputsDir, out)
		if local == folder {
			// A uri_folder output: the rows go to its AppendRowFile.
			f := pt.Spec.AppendRowFile
			if f == "" {
				f = "parallel_run_step.txt"
			}
			if f != filepath.Base(f) || f == "." || f == ".." {
				return nil, core.FieldErrorf("output_file_name", "%q must be a file name, without a folder", f)
			}
			local = filepath.Join(folder, f)
		}
		task.AppendPath = local
		task.ErrorsPath = filepath.Join(filepath.Dir(local), "errors.txt")
		task.OutputDir = filepath.Dir(local)
	} else if len(t.Outputs) == 1 {
		// A batch deployment's summary_only: its score output is still
		// where the scoring script writes.
		task.OutputDir = filepath.Join(p.OutputsDir, t.Outputs[0])
	}
	return task, nil
}

// postedOutputs are the outputs whose files the driver posts to the
// ledger: every output of the job but its ./outputs and ./logs
// (job.ArtifactsOutput), which the agent keeps for each rank itself.
func postedOutputs(outputs []string) []string {
	var out []string
	for _, o := range outputs {
		if o != job.ArtifactsOutput {
			out = append(out, o)
		}
	}
	return out
}

// Env is the variables the driver needs: where it is (job.ParallelDriverEnv)
// and its task (TaskEnv).
func Env(driverPath string, task *Task) (map[string]string, error) {
	b, err := json.Marshal(task)
	if err != nil {
		return nil, err
	}
	return map[string]string{job.ParallelDriverEnv: driverPath, TaskEnv: string(b)}, nil
}

// Write writes the driver into rankDir's Dir and returns its path. The
// folder is 0755 and the file 0644, owned by the agent (root): the rank's
// run-as account must read it (python3 runs it as that account) but never
// change it, so a job cannot swap the program that holds its ledger's
// token for its own. A container rank mounts the folder read-only.
func Write(rankDir string) (string, error) {
	dir := filepath.Join(rankDir, Dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil { // readable by the run-as account (see above)
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // past the umask
		return "", err
	}
	p := filepath.Join(dir, "driver.py")
	if err := os.WriteFile(p, driver, 0o644); err != nil { // readable by the run-as account (see above)
		return "", err
	}
	return p, os.Chmod(p, 0o644)
}

package job_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
)

func TestNormalizeJobSpecAzureExample(t *testing.T) {
	spec := decodeJob(t, azureCommandJob)
	if err := job.NormalizeJobSpec(spec); err != nil {
		t.Fatalf("NormalizeJobSpec: %v", err)
	}
	if spec.Type != "command" || spec.Compute != "cpu-cluster" || spec.Name != "" {
		t.Errorf("type %q compute %q name %q", spec.Type, spec.Compute, spec.Name)
	}
	if spec.InstanceCount() != 2 || spec.Distribution.Type != "pytorch" || spec.Distribution.ProcessCountPerInstance != 2 {
		t.Errorf("resources %+v distribution %+v", spec.Resources, spec.Distribution)
	}
	if spec.Limits.Timeout != 3600 || spec.PriorityValue() != 3 {
		t.Errorf("limits %+v queue %+v", spec.Limits, spec.QueueSettings)
	}
	inputs := map[string]string{}
	for k, in := range spec.Inputs {
		if in.Value != nil {
			inputs[k] = job.FormatInputValue(in.Value)
		} else {
			inputs[k] = "/mnt/inputs/" + k
		}
	}
	cmd, err := job.ExpandCommand(spec.Command, inputs, map[string]string{"model": "/mnt/outputs/model"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "python main.py --data /mnt/inputs/data --lr 0.01 --out /mnt/outputs/model"; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
}

// A normalised spec, encoded as the server returns it, decodes and
// normalises to the same spec.
func TestNormalizeJobSpecRoundTrip(t *testing.T) {
	docs := []string{azureCommandJob}
	for _, d := range azureJobExamples {
		docs = append(docs, d)
	}
	for _, doc := range docs {
		spec := decodeJob(t, doc)
		if err := job.NormalizeJobSpec(spec); err != nil {
			t.Fatal(err)
		}
		out := []byte(mustJSON(spec))
		again := decodeJob(t, string(out))
		if err := job.NormalizeJobSpec(again); err != nil {
			t.Fatalf("normalise %s again: %v", out, err)
		}
		if out2 := mustJSON(again); !bytes.Equal(out, []byte(out2)) {
			t.Errorf("round trip changed the spec:\n%s\n%s", out, out2)
		}
	}
}

func TestNormalizeJobSpecDefaults(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*job.JobSpec)
		check  func(*testing.T, *job.JobSpec)
	}{
		{"valid as is", func(*job.JobSpec) {}, func(t *testing.T, s *job.JobSpec) {
			if s.Type != "command" || s.Compute != "cpu-cluster" {
				t.Errorf("type %q compute %q", s.Type, s.Compute)
			}
		}},
		{"type is case-insensitive", func(s *job.JobSpec) { s.Type = " Command " }, func(t *testing.T, s *job.JobSpec) {
			if s.Type != "command" {
				t.Errorf("type %q", s.Type)
			}
		}},
		{"name may be empty", func(s *job.JobSpec) { s.Name = "" }, func(t *testing.T, s *job.JobSpec) {
			if s.Name != "" {
				t.Errorf("name %q", s.Name)
			}
		}},
		{"name of 255 characters", func(s *job.JobSpec) { s.Name = "a" + strings.Repeat("-", 254) }, nil},
		{"name starting with a digit", func(s *job.JobSpec) { s.Name = "1st_run" }, nil},
		{"compute without prefix", func(s *job.JobSpec) { s.Compute = "gpu-cluster" }, wantCompute("gpu-cluster")},
		{"compute AzureML prefix", func(s *job.JobSpec) { s.Compute = "AzureML:gpu-cluster" }, wantCompute("gpu-cluster")},
		{"compute resource ID", func(s *job.JobSpec) {
			s.Compute = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws/computes/gpu-cluster"
		}, wantCompute("gpu-cluster")},
		{"compute azureml resource ID", func(s *job.JobSpec) {
			s.Compute = "azureml:/subscriptions/0000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws/Computes/cpu-1a/"
		}, wantCompute("cpu-1a")},
		{"input and output names", func(s *job.JobSpec) {
			s.Inputs["_private"] = &job.JobInput{Value: "x"}
			s.Outputs["Model_2"] = &job.JobOutput{}
		}, nil},
		{"input default type and lower-case mode", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Path: "d", Mode: "RO_MOUNT"} }, func(t *testing.T, s *job.JobSpec) {
			if *s.Inputs["data"] != (job.JobInput{Type: "uri_folder", Path: "d", Mode: "ro_mount"}) {
				t.Errorf("input %+v", s.Inputs["data"])
			}
		}},
		{"typed literal from Go", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Type: "integer", Value: 5} }, func(t *testing.T, s *job.JobSpec) {
			if *s.Inputs["lr"] != (job.JobInput{Value: json.Number("5")}) {
				t.Errorf("input %+v", s.Inputs["lr"])
			}
		}},
		{"float literal from Go", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: 0.5} }, nil},
		{"false and empty literals", func(s *job.JobSpec) {
			s.Inputs["lr"] = &job.JobInput{Value: false}
			s.Inputs["x"] = &job.JobInput{Value: ""}
		}, nil},
		{"nil output is a folder", func(s *job.JobSpec) { s.Outputs["model"] = nil }, func(t *testing.T, s *job.JobSpec) {
			if s.Outputs["model"] == nil || *s.Outputs["model"] != (job.JobOutput{Type: "uri_folder"}) {
				t.Errorf("output %+v", s.Outputs["model"])
			}
		}},
		{"output type and mode lower-cased", func(s *job.JobSpec) { s.Outputs["model"] = &job.JobOutput{Type: "URI_FILE", Mode: "Upload"} }, func(t *testing.T, s *job.JobSpec) {
			if *s.Outputs["model"] != (job.JobOutput{Type: "uri_file", Mode: "upload"}) {
				t.Errorf("output %+v", s.Outputs["model"])
			}
		}},
		{"a command without references", func(s *job.JobSpec) { s.Command = "echo hello"; s.Inputs = nil; s.Outputs = nil }, nil},
		{"unused inputs are fine", func(s *job.JobSpec) { s.Command = "python x.py" }, nil},
		{"resources defaults", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "2g"} }, func(t *testing.T, s *job.JobSpec) {
			if s.Resources.InstanceCount != 1 {
				t.Errorf("instance_count %d", s.Resources.InstanceCount)
			}
		}},
		{"shm sizes", func(s *job.JobSpec) { s.Resources = &job.JobResources{InstanceCount: 10000, ShmSize: "8GB"} }, nil},
		{"shm size in bytes", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "1048576"} }, nil},
		{"shm size in GiB", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "1.5Gi"} }, nil},
		{"distribution defaults", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "PyTorch"} }, func(t *testing.T, s *job.JobSpec) {
			if *s.Distribution != (job.Distribution{Type: "pytorch", ProcessCountPerInstance: 1}) {
				t.Errorf("distribution %+v", s.Distribution)
			}
		}},
		{"distribution MPI", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "MPI", ProcessCountPerInstance: 8} }, func(t *testing.T, s *job.JobSpec) {
			if *s.Distribution != (job.Distribution{Type: "mpi", ProcessCountPerInstance: 8}) {
				t.Errorf("distribution %+v", s.Distribution)
			}
		}},
		{"distribution TensorFlow", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "TensorFlow"} }, func(t *testing.T, s *job.JobSpec) {
			// worker_count defaults to the instance count, as on Azure.
			if *s.Distribution != (job.Distribution{Type: "tensorflow", WorkerCount: 1}) || s.Distribution.ProcessesPerNode(1) != 1 {
				t.Errorf("distribution %+v", s.Distribution)
			}
		}},
		{"TensorFlow workers and parameter servers", func(s *job.JobSpec) {
			s.Resources = &job.JobResources{InstanceCount: 2}
			s.Distribution = &job.Distribution{Type: "tensorflow", WorkerCount: 3, ParameterServerCount: 1}
		}, func(t *testing.T, s *job.JobSpec) {
			if *s.Distribution != (job.Distribution{Type: "tensorflow", WorkerCount: 3, ParameterServerCount: 1}) || s.Distribution.ProcessesPerNode(2) != 2 {
				t.Errorf("distribution %+v, %d per node", s.Distribution, s.Distribution.ProcessesPerNode(2))
			}
		}},
		{"queue defaults", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{JobTier: "Spot"} }, func(t *testing.T, s *job.JobSpec) {
			if *s.QueueSettings != (job.QueueSettings{JobTier: "spot", Priority: "medium"}) {
				t.Errorf("queue_settings %+v", s.QueueSettings)
			}
		}},
		{"queue priority case", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{JobTier: "Null", Priority: "HIGH"} }, func(t *testing.T, s *job.JobSpec) {
			if *s.QueueSettings != (job.QueueSettings{JobTier: "null", Priority: "high"}) || s.PriorityValue() != 3 {
				t.Errorf("queue_settings %+v", s.QueueSettings)
			}
		}},
		{"retries bounds", func(s *job.JobSpec) { s.Retries = intp(100) }, nil},
		{"no retries", func(s *job.JobSpec) { s.Retries = intp(0) }, nil},
		{"50 tags", func(s *job.JobSpec) { s.Tags = jobTags(50) }, nil},
		{"long description", func(s *job.JobSpec) { s.Description = strings.Repeat("é", 5000) }, nil},
		{"no code", func(s *job.JobSpec) { s.Code = "" }, nil},
		{"local code path", func(s *job.JobSpec) { s.Code = "./src" }, nil},
		{"no environment", func(s *job.JobSpec) { s.Environment = nil }, nil},
		{"blank environment dropped", func(s *job.JobSpec) { s.Environment = " " }, func(t *testing.T, s *job.JobSpec) {
			if s.Environment != nil {
				t.Errorf("environment %#v", s.Environment)
			}
		}},
		{"inline environment", func(s *job.JobSpec) {
			s.Environment = map[string]any{"image": "python:3.11", "conda_file": "conda.yml"}
		}, nil},
		{"build environment", func(s *job.JobSpec) { s.Environment = map[string]any{"build": map[string]any{"path": "./ctx"}} }, nil},
		{"environment of a Go type", func(s *job.JobSpec) { s.Environment = map[string]string{"image": "python:3.11"} }, func(t *testing.T, s *job.JobSpec) {
			if !reflect.DeepEqual(s.Environment, map[string]any{"image": "python:3.11"}) {
				t.Errorf("environment %#v", s.Environment)
			}
		}},
		{"environment variables", func(s *job.JobSpec) {
			s.EnvironmentVariables = map[string]string{"MY_VAR": "1", "_x": "", "OMP_NUM_THREADS": "4", "shoal_lower": "ok"}
		}, nil},
		{"experiment name", func(s *job.JobSpec) { s.ExperimentName = "sklearn-iris_2" }, nil},
		{"timeout", func(s *job.JobSpec) { s.Limits = &job.JobLimits{Timeout: 1} }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.ValidCommandJob()
			tt.modify(s)
			if err := job.NormalizeJobSpec(s); err != nil {
				t.Fatalf("NormalizeJobSpec: %v", err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func wantCompute(name string) func(*testing.T, *job.JobSpec) {
	return func(t *testing.T, s *job.JobSpec) {
		t.Helper()
		if s.Compute != name {
			t.Errorf("compute %q, want %q", s.Compute, name)
		}
	}
}

func jobTags(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m["t"+strings.Repeat("x", i)] = "v"
	}
	return m
}

func TestNormalizeJobSpecRules(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*job.JobSpec)
		field  string
		frags  []string
	}{
		// type
		{"sweep", func(s *job.JobSpec) { s.Type = "sweep" }, "type", []string{"only command jobs are supported"}},
		{"pipeline", func(s *job.JobSpec) { s.Type = "Pipeline" }, "type", []string{"only command jobs are supported"}},
		// name
		{"name starts with '-'", func(s *job.JobSpec) { s.Name = "-run" }, "name", []string{"start with a letter or a digit"}},
		{"name starts with '_'", func(s *job.JobSpec) { s.Name = "_run" }, "name", []string{"start with a letter or a digit"}},
		{"name with a space", func(s *job.JobSpec) { s.Name = "my run" }, "name", []string{"letters, digits"}},
		{"name with a dot", func(s *job.JobSpec) { s.Name = "run.1" }, "name", []string{"letters, digits"}},
		{"name with unicode", func(s *job.JobSpec) { s.Name = "ré" }, "name", []string{"letters, digits"}},
		{"name too long", func(s *job.JobSpec) { s.Name = strings.Repeat("a", 256) }, "name", []string{"at most 255"}},
		// display_name, experiment_name, description, tags
		{"display_name too long", func(s *job.JobSpec) { s.DisplayName = strings.Repeat("d", 256) }, "display_name", []string{"at most 255"}},
		{"display_name with a newline", func(s *job.JobSpec) { s.DisplayName = "a\nb" }, "display_name", []string{"control"}},
		{"experiment_name with a space", func(s *job.JobSpec) { s.ExperimentName = "my experiment" }, "experiment_name", []string{"letters, digits"}},
		{"experiment_name too long", func(s *job.JobSpec) { s.ExperimentName = strings.Repeat("e", 256) }, "experiment_name", nil},
		{"description too long", func(s *job.JobSpec) { s.Description = strings.Repeat("d", 5001) }, "description", []string{"at most 5000"}},
		{"51 tags", func(s *job.JobSpec) { s.Tags = jobTags(51) }, "tags", []string{"at most 50"}},
		{"tag name with a slash", func(s *job.JobSpec) { s.Tags = map[string]string{"a/b": "c"} }, "tags.a/b", nil},
		// command
		{"no command", func(s *job.JobSpec) { s.Command = "" }, "command", []string{"required"}},
		{"blank command", func(s *job.JobSpec) { s.Command = " \n\t" }, "command", []string{"required"}},
		{"command with NUL", func(s *job.JobSpec) { s.Command = "echo \x00" }, "command", []string{"NUL"}},
		{"undeclared input", func(s *job.JobSpec) { s.Command = "python x.py ${{inputs.epochs}}" }, "command", []string{"epochs", "not declared under inputs"}},
		{"undeclared output", func(s *job.JobSpec) { s.Command = "python x.py ${{outputs.checkpoints}}" }, "command", []string{"checkpoints", "not declared under outputs"}},
		{"input named as output", func(s *job.JobSpec) { s.Command = "python x.py ${{outputs.data}}" }, "command", []string{`"data"`, "outputs"}},
		{"search space", func(s *job.JobSpec) { s.Command = "python x.py --lr ${{search_space.lr}}" }, "command", []string{"search_space", "not supported"}},
		{"parent namespace", func(s *job.JobSpec) { s.Command = "python x.py ${{parent.inputs.data}}" }, "command", []string{"parent"}},
		{"bare namespace", func(s *job.JobSpec) { s.Command = "python x.py ${{inputs}}" }, "command", []string{"not a valid reference"}},
		{"empty reference", func(s *job.JobSpec) { s.Command = "python x.py ${{ }}" }, "command", []string{"not a valid reference"}},
		{"bad reference name", func(s *job.JobSpec) { s.Command = "python x.py ${{inputs.a-b}}" }, "command", []string{"not a valid reference"}},
		{"nested reference", func(s *job.JobSpec) { s.Command = "python x.py ${{inputs.data.path}}" }, "command", []string{"not a valid reference"}},
		{"case matters", func(s *job.JobSpec) { s.Command = "python x.py ${{inputs.Data}}" }, "command", []string{"Data"}},
		// code
		{"blank code", func(s *job.JobSpec) { s.Code = "  " }, "code", []string{"blank"}},
		{"code on two lines", func(s *job.JobSpec) { s.Code = "src\nother" }, "code", []string{"one line"}},
		{"code too long", func(s *job.JobSpec) { s.Code = strings.Repeat("a/", 2049) }, "code", []string{"at most 4096"}},
		// environment
		{"environment with a newline", func(s *job.JobSpec) { s.Environment = "azureml:a\n" }, "environment", nil},
		{"environment neither image nor build", func(s *job.JobSpec) { s.Environment = map[string]any{"conda_file": "c.yml"} }, "environment", []string{"image", "build"}},
		{"environment image not a string", func(s *job.JobSpec) { s.Environment = map[string]any{"image": json.Number("3")} }, "environment.image", nil},
		{"environment image empty", func(s *job.JobSpec) { s.Environment = map[string]any{"image": ""} }, "environment.image", nil},
		{"environment build not a mapping", func(s *job.JobSpec) { s.Environment = map[string]any{"build": "./ctx"} }, "environment.build", []string{"mapping"}},
		{"environment build without path", func(s *job.JobSpec) {
			s.Environment = map[string]any{"build": map[string]any{"dockerfile_path": "Dockerfile"}}
		}, "environment.build.path", []string{"required"}},
		{"environment a number", func(s *job.JobSpec) { s.Environment = 3 }, "environment", nil},
		{"environment unencodable", func(s *job.JobSpec) { s.Environment = func() {} }, "environment", nil},
		// environment_variables
		{"variable starting with a digit", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"1X": "a"} }, "environment_variables.1X", []string{"not a valid variable name"}},
		{"variable with a dash", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"MY-VAR": "a"} }, "environment_variables.MY-VAR", []string{"not a valid variable name"}},
		{"variable with '='", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"A=B": "a"} }, "environment_variables.A=B", nil},
		{"empty variable name", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"": "a"} }, "environment_variables.", nil},
		{"SHOAL_ reserved", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"SHOAL_TOKEN": "a"} }, "environment_variables.SHOAL_TOKEN", []string{"reserved"}},
		{"AZUREML_ reserved", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"AZUREML_RUN_ID": "a"} }, "environment_variables.AZUREML_RUN_ID", []string{"reserved"}},
		{"AZ_BATCH_ reserved", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"AZ_BATCH_MASTER_NODE": "a"} }, "environment_variables.AZ_BATCH_MASTER_NODE", []string{"reserved"}},
		{"value with NUL", func(s *job.JobSpec) { s.EnvironmentVariables = map[string]string{"A": "x\x00"} }, "environment_variables.A", []string{"NUL"}},
		// compute
		{"local compute", func(s *job.JobSpec) { s.Compute = "local" }, "compute", []string{"local runs are not supported", "cluster"}},
		{"azureml:local", func(s *job.JobSpec) { s.Compute = "azureml:Local" }, "compute", []string{"local runs are not supported"}},
		{"compute name too short", func(s *job.JobSpec) { s.Compute = "azureml:ab" }, "compute", []string{"between 3 and 24"}},
		{"compute name with '_'", func(s *job.JobSpec) { s.Compute = "cpu_cluster" }, "compute", []string{"only letters, digits and '-'"}},
		{"compute resource ID without computes", func(s *job.JobSpec) { s.Compute = "/subscriptions/0000/resourceGroups/rg" }, "compute", []string{"not a compute resource ID"}},
		{"compute resource ID without a name", func(s *job.JobSpec) { s.Compute = "/subscriptions/0000/computes/" }, "compute", []string{"required"}},
		// inputs
		{"input name with '-'", func(s *job.JobSpec) { s.Inputs["learning-rate"] = &job.JobInput{Value: "1"} }, "inputs", []string{"learning-rate", "letters, digits and '_'"}},
		{"input name with a digit first", func(s *job.JobSpec) { s.Inputs["1st"] = &job.JobInput{Value: "1"} }, "inputs", []string{"1st"}},
		{"empty input name", func(s *job.JobSpec) { s.Inputs[""] = &job.JobInput{Value: "1"} }, "inputs", nil},
		{"input name too long", func(s *job.JobSpec) { s.Inputs[strings.Repeat("i", 256)] = &job.JobInput{Value: "1"} }, "inputs", []string{"255"}},
		{"nil input", func(s *job.JobSpec) { s.Inputs["lr"] = nil }, "inputs.lr", []string{"no value"}},
		{"empty input", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{} }, "inputs.lr", []string{"path", "value"}},
		{"uri input without path", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Type: "uri_file"} }, "inputs.data.path", []string{"required"}},
		{"input path on two lines", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Type: "uri_file", Path: "a\nb"} }, "inputs.data.path", []string{"one line"}},
		{"unsupported input type", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Type: "uri_table", Path: "p"} }, "inputs.data.type", []string{"not supported"}},
		{"literal type without value", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Type: "number"} }, "inputs.lr.default", []string{"required"}},
		{"unknown input mode", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Path: "p", Mode: "mount"} }, "inputs.data.mode", []string{"ro_mount", "download"}},
		{"upload mode on an input", func(s *job.JobSpec) { s.Inputs["data"] = &job.JobInput{Path: "p", Mode: "upload"} }, "inputs.data.mode", nil},
		{"literal with a path", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: "1", Path: "p"} }, "inputs.lr", []string{"path or a mode"}},
		{"literal with a uri type", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: "1", Type: "uri_file"} }, "inputs.lr.type", nil},
		{"literal NaN", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: math.NaN()} }, "inputs.lr", []string{"finite"}},
		{"literal infinity", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: math.Inf(1)} }, "inputs.lr", []string{"finite"}},
		{"literal bad json.Number", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: json.Number("0x10")} }, "inputs.lr", []string{"not a valid number"}},
		{"literal mapping", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: map[string]any{"a": 1}} }, "inputs.lr", []string{"number, string or boolean"}},
		{"literal list", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: []any{1}} }, "inputs.lr", nil},
		{"literal with NUL", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Value: "a\x00"} }, "inputs.lr", []string{"NUL"}},
		{"integer literal with a fraction", func(s *job.JobSpec) { s.Inputs["lr"] = &job.JobInput{Type: "integer", Value: 0.5} }, "inputs.lr", []string{"whole number"}},
		// outputs
		{"output name with '.'", func(s *job.JobSpec) { s.Outputs["model.pt"] = &job.JobOutput{} }, "outputs", []string{"model.pt"}},
		{"output name too long", func(s *job.JobSpec) { s.Outputs[strings.Repeat("o", 256)] = &job.JobOutput{} }, "outputs", nil},
		{"unsupported output type", func(s *job.JobSpec) { s.Outputs["model"] = &job.JobOutput{Type: "integer"} }, "outputs.model.type", []string{"not supported"}},
		{"output download mode", func(s *job.JobSpec) { s.Outputs["model"] = &job.JobOutput{Mode: "download"} }, "outputs.model.mode", []string{"rw_mount", "upload"}},
		{"output path on two lines", func(s *job.JobSpec) { s.Outputs["model"] = &job.JobOutput{Path: "a\rb"} }, "outputs.model.path", nil},
		// resources
		{"negative instance_count", func(s *job.JobSpec) { s.Resources = &job.JobResources{InstanceCount: -1} }, "resources.instance_count", []string{"1 or more"}},
		{"huge instance_count", func(s *job.JobSpec) { s.Resources = &job.JobResources{InstanceCount: 10001} }, "resources.instance_count", []string{"at most 10000"}},
		{"zero shm_size", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "0g"} }, "resources.shm_size", []string{"greater than 0"}},
		{"shm_size in words", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "lots"} }, "resources.shm_size", nil},
		{"shm_size negative", func(s *job.JobSpec) { s.Resources = &job.JobResources{ShmSize: "-2g"} }, "resources.shm_size", nil},
		{"instance_type with control", func(s *job.JobSpec) { s.Resources = &job.JobResources{InstanceType: "a\tb"} }, "resources.instance_type", nil},
		// distribution
		{"distribution without type", func(s *job.JobSpec) { s.Distribution = &job.Distribution{} }, "distribution.type", []string{"required"}},
		{"unknown distribution", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "horovod"} }, "distribution.type", []string{"pytorch, mpi, tensorflow"}},
		{"ray distribution", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "ray"} }, "distribution.type", nil},
		{"negative process count", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "mpi", ProcessCountPerInstance: -1} }, "distribution.process_count_per_instance", []string{"1 or more"}},
		{"huge process count", func(s *job.JobSpec) {
			s.Distribution = &job.Distribution{Type: "mpi", ProcessCountPerInstance: 1025}
		}, "distribution.process_count_per_instance", []string{"at most 1024"}},
		{"TensorFlow tasks not a multiple of the nodes", func(s *job.JobSpec) {
			s.Resources = &job.JobResources{InstanceCount: 2}
			s.Distribution = &job.Distribution{Type: "tensorflow", WorkerCount: 2, ParameterServerCount: 1}
		}, "distribution.worker_count", []string{"multiple of resources.instance_count (2)"}},
		{"TensorFlow with a process count", func(s *job.JobSpec) {
			s.Distribution = &job.Distribution{Type: "tensorflow", ProcessCountPerInstance: 2}
		}, "distribution.process_count_per_instance", []string{"worker_count"}},
		{"TensorFlow tasks without bound", func(s *job.JobSpec) {
			s.Distribution = &job.Distribution{Type: "tensorflow", WorkerCount: 1 << 30, ParameterServerCount: 1 << 30}
		}, "distribution.worker_count", []string{"at most 4096"}},
		{"worker_count on pytorch", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "pytorch", WorkerCount: 2} }, "distribution.worker_count", []string{"tensorflow's"}},
		{"parameter servers on mpi", func(s *job.JobSpec) { s.Distribution = &job.Distribution{Type: "mpi", ParameterServerCount: 1} }, "distribution.parameter_server_count", []string{"tensorflow's"}},
		// limits
		{"negative timeout", func(s *job.JobSpec) { s.Limits = &job.JobLimits{Timeout: -1} }, "limits.timeout", nil},
		{"huge timeout", func(s *job.JobSpec) { s.Limits = &job.JobLimits{Timeout: 2e9} }, "limits.timeout", nil},
		// queue_settings
		{"unknown priority", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{Priority: "urgent"} }, "queue_settings.priority", []string{"low, medium or high"}},
		{"numeric priority", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{Priority: "1"} }, "queue_settings.priority", nil},
		{"unknown job tier", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{JobTier: "gold"} }, "queue_settings.job_tier", []string{"spot", "premium"}},
		{"low_priority is a compute tier", func(s *job.JobSpec) { s.QueueSettings = &job.QueueSettings{JobTier: "low_priority"} }, "queue_settings.job_tier", nil},
		// retries
		{"negative retries", func(s *job.JobSpec) { s.Retries = intp(-1) }, "retries", []string{"between 0 and 100"}},
		{"too many retries", func(s *job.JobSpec) { s.Retries = intp(101) }, "retries", []string{"between 0 and 100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.ValidCommandJob()
			tt.modify(s)
			err := job.NormalizeJobSpec(s)
			coretest.WantFieldError(t, err, tt.field, tt.frags...)
		})
	}
}

func TestNormalizeJobSpecNil(t *testing.T) {
	if err := job.NormalizeJobSpec(nil); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("got %v", err)
	}
}

func TestValidateJobName(t *testing.T) {
	for _, n := range []string{"a", "1", "keen_shark_3v8k2qm1xz", "My-Job_2", strings.Repeat("x", 255)} {
		if err := job.ValidateJobName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range []string{"", "-a", "_a", "a b", "a.b", "a/b", strings.Repeat("x", 256)} {
		coretest.WantFieldError(t, job.ValidateJobName(n), "name")
	}
}

func TestExpandCommand(t *testing.T) {
	in := map[string]string{"data": "/mnt/in/data", "lr": "0.01", "empty": "", "tricky": "${{inputs.data}} $HOME 'q'"}
	out := map[string]string{"model": "/mnt/out/model"}
	tests := []struct{ cmd, want string }{
		{"echo hello", "echo hello"},
		{"", ""},
		{"python x.py --data ${{inputs.data}} --lr ${{inputs.lr}}", "python x.py --data /mnt/in/data --lr 0.01"},
		{"python x.py --data ${{ inputs.data }} --out ${{  outputs.model\t}}", "python x.py --data /mnt/in/data --out /mnt/out/model"},
		{"a${{inputs.lr}}${{inputs.lr}}b", "a0.010.01b"},
		{"x=${{inputs.empty}};", "x=;"},
		{"echo ${{inputs.tricky}}", "echo ${{inputs.data}} $HOME 'q'"}, // verbatim, not expanded again, not quoted
		{"multi\nline ${{inputs.lr}}\n", "multi\nline 0.01\n"},
		{"literal ${HOME} and $[[opt]] and ${{", "literal ${HOME} and $[[opt]] and ${{"},
		{"open ${{inputs.lr", "open ${{inputs.lr"},
		{"${{inputs.lr}}}", "0.01}"},
	}
	for _, tt := range tests {
		got, err := job.ExpandCommand(tt.cmd, in, out)
		if err != nil {
			t.Errorf("%q: %v", tt.cmd, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q expanded to %q, want %q", tt.cmd, got, tt.want)
		}
	}
	for cmd, frags := range map[string][]string{
		"python ${{inputs.missing}}":    {"missing", "not declared under inputs"},
		"python ${{outputs.data}}":      {`"data"`, "not declared under outputs"},
		"python ${{ search_space.lr }}": {"search_space"},
		"python ${{inputs}}":            {"not a valid reference"},
		"python ${{inputs.}}":           {"not a valid reference"},
		"python ${{inputs.a b}}":        {"not a valid reference"},
	} {
		_, err := job.ExpandCommand(cmd, in, out)
		coretest.WantFieldError(t, err, "command", frags...)
	}
	if _, err := job.ExpandCommand("x ${{inputs.a}}", nil, nil); core.ErrorField(err) != "command" {
		t.Errorf("nil maps: %v", err)
	}
}

func TestFormatInputValue(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, ""},
		{"rbf", "rbf"},
		{"", ""},
		{true, "True"},
		{false, "False"},
		{5.0, "5"},
		{-3.0, "-3"},
		{0.0, "0"},
		{0.01, "0.01"},
		{1e-7, "1e-07"},
		{1e20, "100000000000000000000"},
		{1e300, "1e+300"},
		{float32(2), "2"},
		{7, "7"},
		{int64(-9), "-9"},
		{json.Number("10"), "10"},
		{json.Number("0.01"), "0.01"},
		{json.Number("5.0"), "5"},
		{json.Number("1e3"), "1000"},
		{json.Number("-0"), "0"},
		{json.Number("12345678901234567890"), "12345678901234567890"},
		{json.Number("1.50"), "1.50"},
		{json.Number("1e400"), "1e400"},
	}
	for _, tt := range tests {
		if got := job.FormatInputValue(tt.v); got != tt.want {
			t.Errorf("FormatInputValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

type countingReader struct{ n byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.n
		r.n += 37
	}
	return len(p), nil
}

func TestGenerateJobName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z]+_[a-z]+_[0-9a-z]{10}$`)
	if got, want := job.GenerateJobName(repeatReader(0)), "affable_answer_0000000000"; got != want {
		t.Errorf("zero reader: %q, want %q", got, want)
	}
	a := job.GenerateJobName(&countingReader{})
	if b := job.GenerateJobName(&countingReader{}); a != b {
		t.Errorf("same reader, different names: %q %q", a, b)
	}
	seen := map[string]bool{}
	for _, r := range []func() string{
		func() string { return a },
		func() string { return job.GenerateJobName(&countingReader{n: 1}) },
		func() string { return job.GenerateJobName(repeatReader(0xff)) },
		func() string { return job.GenerateJobName(strings.NewReader("short")) }, // runs dry: crypto/rand fills in
		func() string { return job.GenerateJobName(nil) },
		func() string { return job.GenerateJobName(nil) },
	} {
		n := r()
		if !re.MatchString(n) {
			t.Errorf("%q does not look like keen_shark_3v8k2qm1xz", n)
		}
		if err := job.ValidateJobName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
		if seen[n] {
			t.Errorf("%q generated twice", n)
		}
		seen[n] = true
	}
}

func TestValidateArtifactRef(t *testing.T) {
	hex := strings.Repeat("0123456789abcdef", 4)
	for s, want := range map[string]bool{
		"sha256:" + hex:                  true,
		"sha256:" + strings.ToUpper(hex): false,
		"sha256:" + hex[:63]:             false,
		"sha256:" + hex + "0":            false,
		"sha256:" + hex[:63] + "g":       false,
		"SHA256:" + hex:                  false,
		hex:                              false,
		"sha512:" + hex:                  false,
		"":                               false,
		"sha256:":                        false,
		" sha256:" + hex:                 false,
	} {
		if got := job.ValidateArtifactRef(s); got != want {
			t.Errorf("ValidateArtifactRef(%q) = %v, want %v", s, got, want)
		}
	}
}

func intp(n int) *int { return &n }

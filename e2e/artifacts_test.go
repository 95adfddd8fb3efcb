package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readDownloaded reads a downloaded file ("" when it is not there).
func readDownloaded(dir string, rel string) string {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	return string(b)
}

// download runs `shoal job download -n name ARGS` into a fresh folder and
// returns the job's folder in it.
func download(t *testing.T, s *server, name string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, s.env, append([]string{"job", "download", "-n", name, "-p", dir}, args...)...)
	return filepath.Join(dir, name)
}

// Azure ML's hello world writes ./outputs/helloworld.txt without making
// the folder: every job gets ./outputs and ./logs, kept as its artifacts
// output, which job show lists and job download --output-name artifacts
// fetches alone; --all fetches every output, each in a folder of its
// name; an output the job lacks is refused naming it. A pipeline's
// outputs download (they are its steps'), and --all on a pipeline
// fetches every step's outputs into <step>/<output>/.
func TestJobArtifactsAndDownloads(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "cpu", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	dir := pipelineFiles(t)
	if err := os.WriteFile(filepath.Join(dir, "hello.yml"), []byte(`$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: echo "hello world" > ./outputs/helloworld.txt && echo trained > ./logs/train.log && echo w > ${{outputs.model}}/w.txt
outputs:
  model:
    type: uri_folder
compute: azureml:cpu
`), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("command job", func(t *testing.T) {
		name := submitJob(t, s, filepath.Join(dir, "hello.yml"))
		if j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed", "Canceled"); j.Status != "Completed" {
			t.Fatalf("%s; log:\n%s", j, jobLog(t, s, name))
		}
		shown := runJSON[struct {
			Outputs map[string]struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"outputs"`
		}](t, s.env, "job", "show", "-n", name, "-o", "json")
		if a, ok := shown.Outputs["artifacts"]; !ok || !strings.Contains(a.Path, "workspaceartifactstore") || a.Type != "uri_folder" {
			t.Errorf("job show lists outputs %+v, want artifacts on the artifact store", shown.Outputs)
		}
		got := download(t, s, name, "--output-name", "artifacts")
		if b := readDownloaded(got, "artifacts/outputs/helloworld.txt"); b != "hello world\n" {
			t.Errorf("artifacts/outputs/helloworld.txt = %q", b)
		}
		if b := readDownloaded(got, "artifacts/logs/train.log"); b != "trained\n" {
			t.Errorf("artifacts/logs/train.log = %q", b)
		}
		if _, err := os.Stat(filepath.Join(got, "model")); err == nil {
			t.Error("--output-name artifacts downloaded the model output too")
		}
		got = download(t, s, name, "--all")
		if readDownloaded(got, "model/w.txt") != "w\n" || readDownloaded(got, "artifacts/outputs/helloworld.txt") != "hello world\n" {
			t.Errorf("--all: model/w.txt %q, artifacts/outputs/helloworld.txt %q", readDownloaded(got, "model/w.txt"), readDownloaded(got, "artifacts/outputs/helloworld.txt"))
		}
		got = downloadJob(t, s, name)
		if readDownloaded(got, "model/w.txt") != "w\n" || readDownloaded(got, "artifacts/logs/train.log") != "trained\n" {
			t.Errorf("the default download lacks model/w.txt or artifacts/logs/train.log")
		}
		stderr, _ := mustFail(t, s.env, "job", "download", "-n", name, "--output-name", "nope", "-p", t.TempDir())
		if !strings.Contains(stderr, `no output "nope"`) || !strings.Contains(stderr, "artifacts, model") {
			t.Errorf("an output the job lacks: %s", stderr)
		}
	})

	t.Run("pipeline job", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-o", "json")
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		if v := showPipeline(t, s, p.Name); v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		// 1+2+3+4+5: train's model, bound to the pipeline's final_model.
		if b := readDownloaded(downloadJob(t, s, p.Name), "final_model/model.txt"); b != "15" {
			t.Errorf("the pipeline's default download: final_model/model.txt = %q", b)
		}
		if b := readDownloaded(download(t, s, p.Name, "--output-name", "final_model"), "final_model/model.txt"); b != "15" {
			t.Errorf("--output-name final_model: model.txt = %q", b)
		}
		got := download(t, s, p.Name, "--all")
		if b := readDownloaded(got, "prep/data/rows.txt"); b != "1\n2\n3\n4\n5" {
			t.Errorf("--all: prep/data/rows.txt = %q", b)
		}
		if b := readDownloaded(got, "train/model/model.txt"); b != "15" {
			t.Errorf("--all: train/model/model.txt = %q", b)
		}
		stderr, _ := mustFail(t, s.env, "job", "download", "-n", p.Name, "--output-name", "nope", "-p", t.TempDir())
		if !strings.Contains(stderr, `no output "nope"`) || !strings.Contains(stderr, "final_model") {
			t.Errorf("an output the pipeline lacks: %s", stderr)
		}
	})
}

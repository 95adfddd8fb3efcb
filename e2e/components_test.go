package e2e_test

import (
	"strings"
	"testing"
)

// The command components' round trip through the CLI, as `az ml
// component`: create from YAML (its code folder uploaded, version from
// the file), again unchanged (the same version), with another command
// under the same version (refused), with --version; list; show by
// version and latest; archive moves latest; a malformed component is
// refused naming its path.
func TestComponentsCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	dir := t.TempDir()
	write := dirWriter(t, dir)
	write("src/train.py", "print('train')\n")
	const component = `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train_model
display_name: Train
version: 1
type: command
inputs:
  training_data: {type: uri_folder}
  max_epochs: {type: integer, default: 10}
  learning_rate: {type: number, optional: true}
outputs:
  model_output: {type: uri_folder}
code: ./src
environment: azureml:sklearn@latest
command: >-
  python train.py --data ${{inputs.training_data}} --epochs ${{inputs.max_epochs}}
  $[[--lr ${{inputs.learning_rate}}]] --model ${{outputs.model_output}}
`
	file := write("train.yml", component)
	if v := strings.TrimSpace(mustRun(t, s.env, "component", "create", "-f", file, "--query", "version", "-o", "tsv")); v != "1" {
		t.Fatalf("version = %q, want the file's 1", v)
	}
	if got := mustRun(t, s.env, "component", "show", "-n", "train_model", "--version", "1", "--query", "code", "-o", "tsv"); !strings.HasPrefix(got, "sha256:") {
		t.Errorf("code = %q, want the uploaded folder", got)
	}
	if v := strings.TrimSpace(mustRun(t, s.env, "component", "create", "-f", file, "--query", "version", "-o", "tsv")); v != "1" {
		t.Errorf("the same file again = version %q, want 1", v)
	}
	changed := write("train2.yml", strings.Replace(component, "python train.py", "python train2.py", 1))
	_, stderr, code := run(t, s.env, "component", "create", "-f", changed)
	if code == 0 || !strings.Contains(stderr, "another definition") {
		t.Errorf("another command under version 1: exit %d, %q; want refused", code, stderr)
	}
	if v := strings.TrimSpace(mustRun(t, s.env, "component", "create", "-f", changed, "--version", "2", "--query", "version", "-o", "tsv")); v != "2" {
		t.Errorf("--version 2 = %q", v)
	}
	list := mustRun(t, s.env, "component", "list", "-o", "tsv")
	for _, want := range []string{"train_model\t2\tTrain\tcommand", "train_model\t1\tTrain\tcommand"} {
		if !strings.Contains(list, want) {
			t.Errorf("list %q lacks %q", list, want)
		}
	}
	if got := mustRun(t, s.env, "component", "show", "-n", "train_model", "--label", "latest", "--query", "command", "-o", "tsv"); !strings.Contains(got, "train2.py") {
		t.Errorf("latest's command = %q, want version 2's", got)
	}
	mustRun(t, s.env, "component", "archive", "-n", "train_model", "--version", "2", "-o", "none")
	if v := strings.TrimSpace(mustRun(t, s.env, "component", "show", "-n", "train_model", "--label", "latest", "--query", "version", "-o", "tsv")); v != "1" {
		t.Errorf("latest after archiving 2 = %q, want 1", v)
	}
	bad := write("bad.yml", strings.Replace(component, "max_epochs: {type: integer, default: 10}", "max_epochs: {type: integer, default: ten}", 1))
	_, stderr, code = run(t, s.env, "component", "create", "-f", bad)
	if code == 0 || !strings.Contains(stderr, "inputs.max_epochs.default") {
		t.Errorf("a default of the wrong type: exit %d, %q; want refused naming inputs.max_epochs.default", code, stderr)
	}
	unknown := write("unknown.yml", component+"resources_typo: 1\n")
	_, stderr, code = run(t, s.env, "component", "create", "-f", unknown)
	if code == 0 || !strings.Contains(stderr, "resources_typo") {
		t.Errorf("an unknown key: exit %d, %q; want refused naming it", code, stderr)
	}
}

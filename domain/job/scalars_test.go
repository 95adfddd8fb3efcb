package job_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
)

// YAML scalars become strings as azure-ai-ml makes them (str(value)): a
// string input's boolean default False is "False", so that it is one of
// its own enum ['True', 'False'] (Azure's image_classification_with_densenet
// component writes exactly that); a literal boolean in a command is
// True or False.
func TestYAMLBooleansBecomeStringsAsAzuresPythonWritesThem(t *testing.T) {
	c, err := job.DecodeComponent([]byte(`{"name": "init", "version": "1", "type": "command", "command": "python x.py --center-crop ${{inputs.center_crop}} --flip ${{inputs.flip}}",
		"inputs": {"center_crop": {"type": "string", "default": false, "enum": ["True", "False"]},
		           "flip": {"type": "boolean", "default": true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := job.NormalizeComponent(c, true); err != nil {
		t.Fatalf("a boolean default of a string input with enum [True, False]: %v", err)
	}
	if got := c.Inputs["center_crop"].Default; got != "False" {
		t.Errorf("center_crop's default = %#v, want \"False\"", got)
	}
	spec, err := job.DecodeJobSpec([]byte(`{"command": "python x.py --flag ${{inputs.flag}} --name ${{inputs.n}}", "compute": "cpu",
		"inputs": {"flag": false, "n": {"type": "string", "default": true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := job.NormalizeJobSpec(spec); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for k, in := range spec.Inputs {
		values[k] = job.FormatInputValue(in.Value)
	}
	got, err := job.ExpandCommand(spec.Command, values, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "python x.py --flag False --name True"; got != want {
		t.Errorf("command = %q, want %q", got, want)
	}
	// A value that is none of the enum is still refused, naming it.
	c, err = job.DecodeComponent([]byte(`{"name": "init", "version": "1", "type": "command", "command": "x ${{inputs.c}}",
		"inputs": {"c": {"type": "string", "default": false, "enum": ["yes", "no"]}}}`))
	if err == nil {
		err = job.NormalizeComponent(c, true)
	}
	coretest.WantFieldError(t, err, "inputs.c.default", "False")
}

package job_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
)

func decodeComponent(t testing.TB, doc map[string]any) (*job.Component, error) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := job.DecodeComponent(raw)
	if err != nil {
		return nil, err
	}
	return c, job.NormalizeComponent(c, true)
}

func TestComponentDecode(t *testing.T) {
	c, err := decodeComponent(t, jobtest.TrainComponent())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "train" || c.Version != "1" || c.Type != "command" || c.Inputs["max_epochs"].Default != json.Number("10") ||
		*c.Inputs["max_epochs"].Max != 100 || c.Outputs["model_output"].Type != "uri_folder" || c.Inputs["kind"].Enum[1] != "slow" {
		t.Errorf("component = %+v", c)
	}
	// Show output (read-only keys) decodes again.
	raw, _ := json.Marshal(c)
	if _, err := job.DecodeComponent(raw); err != nil {
		t.Errorf("the component's own JSON: %v", err)
	}
}

func TestComponentErrors(t *testing.T) {
	for _, tc := range []struct {
		name, field, msg string
		edit             func(map[string]any) map[string]any
	}{
		{"no name", "name", "is required", func(d map[string]any) map[string]any { return jobtest.Set(d, "name", nil) }},
		{"bad name", "name", "letters, digits", func(d map[string]any) map[string]any { return jobtest.Set(d, "name", "a b") }},
		{"bad version", "version", "letters, digits", func(d map[string]any) map[string]any { return jobtest.Set(d, "version", "1 0") }},
		{"pipeline component", "type", "components are command (type: command) and parallel", func(d map[string]any) map[string]any { return jobtest.Set(d, "type", "pipeline") }},
		{"unknown key", "trial", "unknown key", func(d map[string]any) map[string]any { return jobtest.Set(d, "trial", 1) }},
		{"no command", "command", "is required", func(d map[string]any) map[string]any { return jobtest.Set(d, "command", nil) }},
		{"undeclared input", "command", `input "epochs"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "command", "python x.py ${{inputs.epochs}}")
		}},
		{"undeclared output in a block", "command", `output "model"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "command", "python x.py $[[--lr ${{inputs.lr}} ${{outputs.model}}]]")
		}},
		{"nested blocks", "command", "nested", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "command", "x $[[a $[[${{inputs.lr}}]] ]]")
		}},
		{"block without input", "command", "references no input", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "command", "x $[[--verbose]]")
		}},
		{"input without type", "inputs.lr.type", "is required", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.lr.type", nil)
		}},
		{"unknown input type", "inputs.lr.type", "not supported", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.lr.type", "uri_table")
		}},
		{"input not a mapping", "inputs.lr", "must be a mapping", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.lr", 0.1)
		}},
		{"unknown input key", "inputs.lr.value", "unknown key", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.lr.value", 0.1)
		}},
		{"default of the wrong type", "inputs.max_epochs.default", "whole number", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.max_epochs.default", "ten")
		}},
		{"default below min", "inputs.max_epochs.default", "minimum", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.max_epochs.default", 0)
		}},
		{"default not in enum", "inputs.kind.default", "allowed values", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.kind.default", "medium")
		}},
		{"default for a folder", "inputs.training_data.default", "not allowed", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.training_data.default", "./data")
		}},
		{"enum on an integer", "inputs.max_epochs.enum", "string inputs only", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.max_epochs.enum", []any{1, 2})
		}},
		{"min over max", "inputs.max_epochs.min", "more than max", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.max_epochs.min", 200)
		}},
		{"optional not a boolean", "inputs.lr.optional", "true or false", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.lr.optional", "yes")
		}},
		{"bad input name", "inputs", "name", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.1x", map[string]any{"type": "string", "optional": true})
		}},
		{"bad output type", "outputs.model_output.type", "not supported", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "outputs.model_output.type", "boolean")
		}},
		{"bad output mode", "outputs.model_output.mode", "unknown output mode", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "outputs.model_output.mode", "copy")
		}},
		{"bad environment", "environment", "not an environment reference", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "environment", "sklearn")
		}},
		{"reserved variable", "environment_variables.SHOAL_X", "reserved", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "environment_variables", map[string]any{"SHOAL_X": "1"})
		}},
		{"bad distribution", "distribution.type", "unknown distribution", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "distribution", map[string]any{"type": "horovod"})
		}},
		{"is_deterministic not a boolean", "is_deterministic", "true or false", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "is_deterministic", "no")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeComponent(t, tc.edit(jobtest.TrainComponent()))
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(core.ErrorMessage(err), tc.msg) {
				t.Errorf("error = %v / field %q; want EINVALID on %q containing %q", err, core.ErrorField(err), tc.field, tc.msg)
			}
		})
	}
	for _, doc := range []string{"", "null", "[1]", "{"} {
		if _, err := job.DecodeComponent([]byte(doc)); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("DecodeComponent(%q) = %v, want EINVALID", doc, err)
		}
	}
}

func TestExpandComponentCommand(t *testing.T) {
	const cmd = "run $[[--a ${{inputs.a}}]] $[[--b ${{inputs.b}} --c ${{inputs.c}}]] --out ${{outputs.o}}"
	for _, tc := range []struct {
		provided []string
		want     string
	}{
		{nil, "run   --out ${{outputs.o}}"},
		{[]string{"a"}, "run --a ${{inputs.a}}  --out ${{outputs.o}}"},
		{[]string{"b"}, "run   --out ${{outputs.o}}"},
		{[]string{"a", "b", "c"}, "run --a ${{inputs.a}} --b ${{inputs.b}} --c ${{inputs.c}} --out ${{outputs.o}}"},
	} {
		p := map[string]bool{}
		for _, n := range tc.provided {
			p[n] = true
		}
		if got, err := job.ExpandComponentCommand(cmd, p, nil, nil); err != nil || got != tc.want {
			t.Errorf("provided %v: %q, %v; want %q", tc.provided, got, err, tc.want)
		}
	}
	got, err := job.ExpandComponentCommand(cmd, map[string]bool{"a": true}, map[string]string{"a": "1"}, map[string]string{"o": "/out"})
	if err != nil || got != "run --a 1  --out /out" {
		t.Errorf("expanded = %q, %v", got, err)
	}
}

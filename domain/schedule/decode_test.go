package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

const trig = `"trigger": {"type": "cron", "expression": "0 2 * * *"}`

// Hostile and mistaken documents are refused naming the field and the
// rule, never a panic.
func TestDecodeRefusals(t *testing.T) {
	for _, c := range []struct{ name, doc, field, words string }{
		{"not a mapping", `[1]`, "", "must be a mapping"},
		{"unknown key with a near one", `{"name": "a", "triger": {}, "create_job": "azureml:j"}`, "triger", `did you mean "trigger"`},
		{"unknown trigger key", `{"name": "a", "trigger": {"type": "cron", "expresion": "x"}, "create_job": "azureml:j"}`, "trigger.expresion", `did you mean "expression"`},
		{"unknown pattern key", `{"name": "a", "trigger": {"type": "recurrence", "schedule": {"hour": [1]}}, "create_job": "azureml:j"}`, "trigger.schedule.hour", `"hours"`},
		{"no name", `{` + trig + `, "create_job": "azureml:j"}`, "name", "required"},
		{"name with a slash", `{"name": "a/b", ` + trig + `, "create_job": "azureml:j"}`, "name", "letters, digits"},
		{"name too long", `{"name": "` + strings.Repeat("a", MaxNameLength+1) + `", ` + trig + `, "create_job": "azureml:j"}`, "name", "at most 200"},
		{"no trigger", `{"name": "a", "create_job": "azureml:j"}`, "trigger", "required"},
		{"interval not a number", `{"name": "a", "trigger": {"type": "recurrence", "frequency": "day", "interval": "x"}, "create_job": "azureml:j"}`, "trigger.interval", "whole number"},
		{"nothing to do", `{"name": "a", ` + trig + `}`, "create_job", "required"},
		{"two things to do", `{"name": "a", ` + trig + `, "create_job": "azureml:j", "invoke_batch_endpoint": {"endpoint": "e", "input": "azureml:d@latest"}}`, "invoke_batch_endpoint", "one thing"},
		{"a local job file sent to the server", `{"name": "a", ` + trig + `, "create_job": "./job.yml"}`, "create_job", "local job file"},
		{"a local job file beside overrides", `{"name": "a", ` + trig + `, "create_job": {"job": "../../etc/passwd", "tags": {}}}`, "create_job.job", "local job file"},
		{"azureml: naming nothing", `{"name": "a", ` + trig + `, "create_job": "azureml:"}`, "create_job", "must name a job"},
		{"create_job a number", `{"name": "a", ` + trig + `, "create_job": 3}`, "create_job", "must be a job file"},
		{"invoke without input", `{"name": "a", ` + trig + `, "invoke_batch_endpoint": {"endpoint": "e"}}`, "invoke_batch_endpoint.input", "required"},
		{"invoke unknown key", `{"name": "a", ` + trig + `, "invoke_batch_endpoint": {"endpoint": "e", "inputs": "x"}}`, "invoke_batch_endpoint.inputs", `"input"`},
	} {
		_, err := Decode([]byte(c.doc))
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != c.field || !strings.Contains(core.ErrorMessage(err), c.words) {
			t.Errorf("%s: %v (field %q), want field %q saying %q", c.name, err, core.ErrorField(err), c.field, c.words)
		}
	}
}

// Azure's forms of create_job: an existing job with overrides kept for
// the service, a job document with overrides merged as merge_dict
// merges (mappings key by key, the rest replaced), an inline job; show
// output's read-only keys are ignored.
func TestDecodeCreateJob(t *testing.T) {
	s, err := Decode([]byte(`{"name": "a", "is_enabled": false, "status": {"fires": 3}, "created_by": "x", ` + trig + `,
		"create_job": {"job": "azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/jobs/base", "compute": "azureml:gpu"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.CreateJob.SourceJob != "base" || string(s.CreateJob.Overrides) != `{"compute":"azureml:gpu"}` || !s.IsEnabled || s.Status.Fires != 0 || s.CreatedBy != "" {
		t.Errorf("azureml job: %+v %s", s, s.CreateJob.Overrides)
	}
	s, err = Decode([]byte(`{"name": "a", ` + trig + `, "create_job": {"job": {"type": "command", "command": "x", "inputs": {"a": 1, "b": 2}, "tags": {"t": "1"}, "seed": 9007199254740993},
		"inputs": {"b": 3}, "tags": ["replaced"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.CreateJob.Job, &got); err != nil {
		t.Fatal(err)
	}
	if in := got["inputs"].(map[string]any); in["a"] != 1.0 || in["b"] != 3.0 || got["command"] != "x" {
		t.Errorf("merged = %s", s.CreateJob.Job)
	}
	if tags, _ := got["tags"].([]any); len(tags) != 1 {
		t.Errorf("a list override replaces: %s", s.CreateJob.Job)
	}
	if !strings.Contains(string(s.CreateJob.Job), "9007199254740993") {
		t.Errorf("a number past 2^53 changed: %s", s.CreateJob.Job)
	}
	s, err = Decode([]byte(`{"name": "a", ` + trig + `, "create_job": {"type": "command", "command": "inline"}}`))
	if err != nil || !strings.Contains(string(s.CreateJob.Job), "inline") {
		t.Errorf("inline job: %v %+v", err, s)
	}
}

// A firing's name fits a job name and is the same for the same minute;
// the expressions are replaced in every string, nested ones included.
func TestFiredJobNameAndExpand(t *testing.T) {
	at := time.Date(2026, 3, 1, 2, 0, 42, 0, time.FixedZone("CET", 3600))
	if n := FiredJobName("Nightly_Train", at); n != "nightly_train-20260301t0100" {
		t.Errorf("FiredJobName = %q", n)
	}
	if n := FiredJobName(strings.Repeat("a", MaxNameLength), at); len(n) > 255 {
		t.Errorf("the longest name's job name has %d characters", len(n))
	}
	out, err := ExpandJob([]byte(`{"command": "run ${{name}}", "inputs": {"when": "${{creation_context.trigger_time}}", "n": 12345678901234567890}, "args": ["${{name}}"]}`), "j-1", at)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"args":["j-1"],"command":"run j-1","inputs":{"n":12345678901234567890,"when":"2026-03-01T01:00:42Z"}}`
	if string(out) != want {
		t.Errorf("ExpandJob = %s, want %s", out, want)
	}
}

// Whatever the bytes, Decode answers a value or an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name": "a", ` + trig + `, "create_job": {"job": {"type": "command"}, "x": {"y": null}}}`))
	f.Add([]byte(`{"name": "a", "trigger": null, "create_job": {"job": null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Decode(b)
	})
}

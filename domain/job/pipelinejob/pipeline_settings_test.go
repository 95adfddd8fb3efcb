package pipelinejob_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// Azure's 3a_basic_pipeline misspells default_datastore as
// default_datestore, and Azure accepts it (its settings schema includes
// unknown keys): Shoal accepts it too, keeps it as written and says it
// was ignored, naming the setting it is closest to.
func TestPipelineUnknownSettingsKeptAndWarned(t *testing.T) {
	doc := threeSteps()
	doc["settings"].(map[string]any)["default_datestore"] = "azureml:workspaceblobstore"
	doc["settings"].(map[string]any)["on_init"] = nil // null asks for nothing
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got := string(spec.Settings.Ignored["default_datestore"]); got != `"azureml:workspaceblobstore"` {
		t.Fatalf("kept %q, want the value as written", got)
	}
	if _, ok := spec.Settings.Ignored["on_init"]; ok {
		t.Fatal("a null setting was kept")
	}
	w := pipelinejob.IgnoredSettingsWarning(spec)
	for _, want := range []string{"settings.default_datestore", "ignored", `did you mean "default_datastore"`} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	// Kept through a store round trip: show returns what was written.
	b, _ := json.Marshal(spec)
	if !strings.Contains(string(b), `"default_datestore":"azureml:workspaceblobstore"`) {
		t.Errorf("the stored document lost the setting: %s", b)
	}
	if w := pipelinejob.IgnoredSettingsWarning(nil); w != "" {
		t.Errorf("no pipeline: warning %q", w)
	}
	plain, err := decodePipeline(t, threeSteps())
	if err != nil {
		t.Fatal(err)
	}
	if w := pipelinejob.IgnoredSettingsWarning(plain); w != "" {
		t.Errorf("known settings only: warning %q", w)
	}
}

// Attacks: the settings mapping is not a place to store data. A huge
// value, too many unknown keys, a control character in a name and a
// settings value that is not a mapping are refused naming the field.
func TestPipelineUnknownSettingsRefusals(t *testing.T) {
	many := map[string]any{}
	for i := 0; i < 40; i++ {
		many[fmt.Sprintf("k%02d", i)] = i
	}
	for name, tc := range map[string]struct {
		settings any
		field    string
	}{
		"huge value":    {map[string]any{"blob": strings.Repeat("x", 5000)}, "settings.blob"},
		"too many":      {many, "settings.k32"},
		"control char":  {map[string]any{"a\u0007b": 1}, "settings"},
		"long name":     {map[string]any{strings.Repeat("n", 200): 1}, "settings"},
		"not a mapping": {"fast", "settings"},
		"known, wrong":  {map[string]any{"continue_on_step_failure": "maybe"}, "settings.continue_on_step_failure"},
	} {
		t.Run(name, func(t *testing.T) {
			doc := threeSteps()
			doc["settings"] = tc.settings
			_, err := decodePipeline(t, doc)
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field {
				t.Fatalf("got %v (field %q), want EINVALID on %s", err, core.ErrorField(err), tc.field)
			}
		})
	}
}

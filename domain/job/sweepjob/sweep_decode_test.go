package sweepjob_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

// azureSweepJob is a sweep job in the shape of Azure ML's CLI v2 examples
// (written for these tests), as the CLI sends it (YAML converted to JSON).
const azureSweepJob = `{
  "$schema": "https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json",
  "type": "sweep",
  "display_name": "iris-sweep",
  "experiment_name": "iris-sweep",
  "trial": {
    "code": "src",
    "command": "python main.py --iris-csv ${{inputs.iris_csv}} --C ${{search_space.C}} --kernel ${{ search_space.kernel }} --coef0 ${{search_space.coef0}}",
    "environment": "azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest"
  },
  "inputs": {"iris_csv": {"type": "uri_file", "path": "https://example.net/iris.csv"}},
  "compute": "azureml:cpu-cluster",
  "sampling_algorithm": {"type": "random", "seed": 42},
  "search_space": {
    "C": {"type": "uniform", "min_value": 0.5, "max_value": 0.9},
    "kernel": {"type": "choice", "values": ["rbf", "linear", "poly"]},
    "coef0": {"type": "quniform", "min_value": 0.1, "max_value": 1, "q": 0.1}
  },
  "objective": {"goal": "Maximize", "primary_metric": "training_f1_score"},
  "limits": {"max_total_trials": 12, "max_concurrent_trials": 3, "timeout": 7200, "trial_timeout": "PT20M"},
  "early_termination": {"type": "bandit", "slack_factor": 0.1, "evaluation_interval": 1, "delay_evaluation": 2}
}`

func decodeSweep(t *testing.T, doc string) (*job.SweepSpec, error) {
	t.Helper()
	spec, err := sweepjob.DecodeSweepSpec([]byte(doc))
	if err != nil {
		return nil, err
	}
	return spec, sweepjob.NormalizeSweepSpec(spec)
}

func TestDecodeSweepSpecAzureShape(t *testing.T) {
	spec, err := decodeSweep(t, azureSweepJob)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Compute != "cpu-cluster" || spec.Trial.Code != "src" || spec.Objective.Goal != "maximize" {
		t.Fatalf("spec: %+v", spec)
	}
	if a := spec.SamplingAlgorithm; a.Type != "random" || a.Rule != "random" || a.Seed == nil || *a.Seed != 42 {
		t.Fatalf("sampling: %+v", a)
	}
	if l := spec.Limits; *l != (job.SweepLimits{MaxTotalTrials: 12, MaxConcurrentTrials: 3, Timeout: 7200, TrialTimeout: 1200}) {
		t.Fatalf("limits: %+v", l)
	}
	if p := spec.EarlyTermination; p.Type != "bandit" || *p.SlackFactor != 0.1 || p.DelayEvaluation != 2 {
		t.Fatalf("policy: %+v", p)
	}
	if k := spec.SearchSpace["kernel"]; len(k.Values) != 3 || k.Values[1] != "linear" {
		t.Fatalf("kernel: %+v", k)
	}
	// The trial's job: hyperparameters substituted, inputs left for the job.
	js, err := sweepjob.TrialJobSpec(spec, map[string]string{"C": "0.7", "kernel": "rbf", "coef0": "0.3"})
	if err != nil {
		t.Fatal(err)
	}
	want := "python main.py --iris-csv ${{inputs.iris_csv}} --C 0.7 --kernel rbf --coef0 0.3"
	if js.Command != want || js.Compute != "cpu-cluster" || js.Inputs["iris_csv"].Path == "" || js.ExperimentName != "iris-sweep" {
		t.Fatalf("trial job: %+v", js)
	}
	if err := job.NormalizeJobSpec(js); err != nil {
		t.Fatalf("trial job is not a valid command job: %v", err)
	}
	js.Inputs["iris_csv"].Path = "changed"
	if spec.Inputs["iris_csv"].Path == "changed" {
		t.Fatal("TrialJobSpec shares inputs with the sweep")
	}
	// What the server returns can be submitted again unchanged.
	out, _ := json.Marshal(spec)
	again, err := decodeSweep(t, string(out))
	if err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if out2, _ := json.Marshal(again); string(out) != string(out2) {
		t.Fatalf("round trip changed the spec:\n%s\n%s", out, out2)
	}
}

func TestDecodeSweepSpecDefaultsAndSpellings(t *testing.T) {
	spec, err := decodeSweep(t, `{"type": "Sweep", "compute": "cpu-cluster", "sampling_algorithm": "GRID",
	  "trial": {"command": "python t.py --bs ${{search_space.bs}}"},
	  "search_space": {"bs": {"type": "Choice", "values": [16, 32]}},
	  "objective": {"primary_metric": "loss", "goal": "minimize"},
	  "early_termination": {"type": "median_stopping"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if spec.SamplingAlgorithm.Type != "grid" || spec.SearchSpace["bs"].Type != "choice" {
		t.Fatalf("spelling: %+v %+v", spec.SamplingAlgorithm, spec.SearchSpace["bs"])
	}
	if l := spec.Limits; l.MaxTotalTrials != 1000 || l.MaxConcurrentTrials != 1000 {
		t.Fatalf("default limits: %+v", l)
	}
	if spec.EarlyTermination.EvaluationInterval != 1 {
		t.Fatalf("default evaluation_interval: %+v", spec.EarlyTermination)
	}
	// A number YAML 1.1 reads as a string is a number.
	spec, err = decodeSweep(t, `{"type": "sweep", "compute": "cpu-cluster", "sampling_algorithm": "random",
	  "trial": {"command": "t ${{search_space.lr}}"}, "search_space": {"lr": {"type": "loguniform", "min_value": "-9.2", "max_value": -2}},
	  "objective": {"primary_metric": "a", "goal": "maximize"}, "limits": {"max_total_trials": 5, "max_concurrent_trials": 9}}`)
	if err != nil {
		t.Fatal(err)
	}
	if *spec.SearchSpace["lr"].MinValue != -9.2 || spec.Limits.MaxConcurrentTrials != 5 {
		t.Fatalf("spec: %+v %+v", spec.SearchSpace["lr"], spec.Limits)
	}
}

// sweepWith returns the Azure-shaped sweep with one key replaced (or
// removed when value is "").
func sweepWith(t *testing.T, path, value string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(azureSweepJob), &doc); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(path, ".")
	m := doc
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	last := keys[len(keys)-1]
	if value == "" {
		delete(m, last)
	} else {
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatalf("value %s: %v", value, err)
		}
		m[last] = v
	}
	out, _ := json.Marshal(doc)
	return string(out)
}

func TestSweepSpecErrorsNamePaths(t *testing.T) {
	for _, tc := range []struct {
		path, value, field, text string
	}{
		{"type", `"pipeline"`, "type", "must be sweep"},
		{"trial", "", "trial", "is required"},
		{"trial", `"python x"`, "trial", "must be a mapping"},
		{"trial.command", "", "trial.command", "is required"},
		{"trial.command", `"python x --lr ${{search_space.lr}}"`, "trial.command", `hyperparameter "lr"`},
		{"trial.command", `"python x ${{inputs.nope}}"`, "trial.command", "not declared under inputs"},
		{"trial.command", `"python x ${{parent.inputs.a}}"`, "trial.command", "not supported"},
		{"trial.command", `7`, "trial.command", "must be a string"},
		{"trial.compute", `"c"`, "trial.compute", "unknown key"},
		{"trial.resources", `{"instance_count": 0}`, "trial.resources.instance_count", "1 or more"},
		{"trial.environment", `"azureml:"`, "trial.environment", ""},
		{"trial.environment_variables", `{"SHOAL_X": "1"}`, "trial.environment_variables.SHOAL_X", "reserved"},
		{"trial.distribution", `{"type": "horovod"}`, "trial.distribution.type", "unknown distribution type"},
		{"inputs", `{"a-b": 1}`, "inputs", "name"},
		{"command", `"x"`, "command", "unknown key"},
		{"identity", `{"type": "certificate"}`, "identity.type", "unknown identity type"},
		{"identity", `{"type": "aml_token", "client_id": "x"}`, "identity.client_id", "type only"},
		{"search_space", "", "search_space", "is required"},
		{"search_space", `{}`, "search_space", "at least one"},
		{"search_space.C", `[1, 2]`, "search_space.C", "must be a mapping"},
		{"search_space.C", `{"type": "gamma", "min_value": 1, "max_value": 2}`, "search_space.C.type", "unknown distribution"},
		{"search_space.C", `{"min_value": 1, "max_value": 2}`, "search_space.C.type", "is required"},
		{"search_space.C", `{"type": "uniform", "min_value": 0.9, "max_value": 0.5}`, "search_space.C.min_value", "less than max_value"},
		{"search_space.C", `{"type": "uniform", "min_value": "a", "max_value": 0.5}`, "search_space.C.min_value", "finite number"},
		{"search_space.C", `{"type": "uniform", "max_value": 0.5}`, "search_space.C.min_value", "is required"},
		{"search_space.C", `{"type": "uniform", "min_value": 0, "max_value": 0.5, "q": 1}`, "search_space.C.q", "does not apply"},
		{"search_space.C", `{"type": "uniform", "min_value": 0, "max_value": 1, "step": 1}`, "search_space.C.step", "unknown key"},
		{"search_space.C", `{"type": "quniform", "min_value": 0, "max_value": 1, "q": 0}`, "search_space.C.q", "greater than 0"},
		{"search_space.C", `{"type": "normal", "mu": 0, "sigma": -1}`, "search_space.C.sigma", "greater than 0"},
		{"search_space.C", `{"type": "lognormal", "mu": 800, "sigma": 1}`, "search_space.C.mu", "logarithm"},
		{"search_space.C", `{"type": "loguniform", "min_value": 0, "max_value": 900}`, "search_space.C.max_value", "logarithms"},
		{"search_space.C", `{"type": "randint", "upper": 0}`, "search_space.C.upper", "1 or more"},
		{"search_space.C", `{"type": "randint", "upper": 2.5}`, "search_space.C.upper", "whole number"},
		{"search_space.C", `{"type": "choice", "values": []}`, "search_space.C.values", "at least one"},
		{"search_space.C", `{"type": "choice", "values": "abc"}`, "search_space.C.values", "must be a list"},
		{"search_space.C", `{"type": "choice", "values": [1, {"a": 1}]}`, "search_space.C.values[1]", "nested search spaces"},
		{"search_space.C", `{"type": "choice", "values": [null]}`, "search_space.C.values[0]", "not null"},
		{"sampling_algorithm", "", "sampling_algorithm", "is required"},
		{"sampling_algorithm", `"hyperband"`, "sampling_algorithm", "unknown sampling algorithm"},
		{"sampling_algorithm", `{"type": "random", "rule": "sobol"}`, "sampling_algorithm.rule", "sobol is not supported"},
		{"sampling_algorithm", `{"type": "random", "seed": "x"}`, "sampling_algorithm.seed", "whole number"},
		{"sampling_algorithm", `{"type": "grid", "seed": 1}`, "sampling_algorithm.seed", "random sampling only"},
		{"sampling_algorithm", `{"type": "random", "logbase": "e"}`, "sampling_algorithm.logbase", "unknown key"},
		{"sampling_algorithm", `"grid"`, "search_space.C.type", "grid sampling takes only choice"},
		{"objective", "", "objective", "is required"},
		{"objective.goal", `"best"`, "objective.goal", "maximize or minimize"},
		{"objective.goal", "", "objective.goal", "is required"},
		{"objective.primary_metric", `""`, "objective.primary_metric", "is required"},
		{"objective.primary_metric", `1`, "objective.primary_metric", "must be a string"},
		{"limits.max_total_trials", `0`, "limits.max_total_trials", "1 or more"},
		{"limits.max_total_trials", `1001`, "limits.max_total_trials", "between 1 and 1000"},
		{"limits.max_concurrent_trials", `1.5`, "limits.max_concurrent_trials", "whole number"},
		{"limits.timeout", `"soon"`, "limits.timeout", "ISO 8601"},
		{"limits.trial_timeout", `0`, "limits.trial_timeout", "at least 1 second"},
		{"early_termination.type", `"hyperband"`, "early_termination.type", "unknown policy"},
		{"early_termination.slack_factor", "", "early_termination.slack_factor", "slack_factor (a ratio) or slack_amount"},
		{"early_termination.slack_amount", `0.2`, "early_termination.slack_amount", "not both"},
		{"early_termination.slack_factor", `-0.1`, "early_termination.slack_factor", "greater than 0"},
		{"early_termination.evaluation_interval", `-1`, "early_termination.evaluation_interval", "0 or more"},
		{"early_termination.truncation_percentage", `10`, "early_termination.truncation_percentage", "truncation_selection policy only"},
		{"early_termination", `{"type": "truncation_selection"}`, "early_termination.truncation_percentage", "between 1 and 99"},
		{"early_termination", `{"type": "median_stopping", "slack_factor": 0.1}`, "early_termination.slack_factor", "bandit policy only"},
		{"early_termination", `{"type": "bandit", "slack": 0.1}`, "early_termination.slack", "unknown key"},
		{"trials", `3`, "trials", "unknown key"},
	} {
		doc := sweepWith(t, tc.path, tc.value)
		_, err := decodeSweep(t, doc)
		if err == nil {
			t.Errorf("%s=%s: accepted", tc.path, tc.value)
			continue
		}
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(core.ErrorMessage(err), tc.text) {
			t.Errorf("%s=%s: got code %s field %q: %s; want field %q with %q", tc.path, tc.value, core.ErrorCode(err), core.ErrorField(err), core.ErrorMessage(err), tc.field, tc.text)
		}
		if !strings.HasPrefix(core.ErrorMessage(err), tc.field+": ") {
			t.Errorf("%s: message %q does not start with its field", tc.path, core.ErrorMessage(err))
		}
	}
}

func TestSweepBayesianRules(t *testing.T) {
	base := `{"type": "sweep", "compute": "cpu-cluster", "sampling_algorithm": "bayesian", "trial": {"command": "t ${{search_space.x}}"},
	  "objective": {"primary_metric": "m", "goal": "maximize"}, `
	for _, tc := range []struct{ rest, field string }{
		{`"search_space": {"x": {"type": "uniform", "min_value": 0, "max_value": 1}}}`, ""},
		{`"search_space": {"x": {"type": "quniform", "min_value": 0, "max_value": 10, "q": 2}}}`, ""},
		{`"search_space": {"x": {"type": "choice", "values": [1, 2]}}}`, ""},
		{`"search_space": {"x": {"type": "normal", "mu": 0, "sigma": 1}}}`, "search_space.x.type"},
		{`"search_space": {"x": {"type": "randint", "upper": 3}}}`, "search_space.x.type"},
		{`"search_space": {"x": {"type": "uniform", "min_value": 0, "max_value": 1}}, "early_termination": {"type": "bandit", "slack_factor": 0.1}}`, "early_termination"},
	} {
		_, err := decodeSweep(t, base+tc.rest)
		if core.ErrorField(err) != tc.field || (tc.field == "") != (err == nil) {
			t.Errorf("%s: got %v, want field %q", tc.rest, err, tc.field)
		}
	}
}

func TestSubstituteSearchSpace(t *testing.T) {
	got, err := sweepjob.SubstituteSearchSpace("a ${{search_space.lr}} b ${{ search_space.lr }} ${{inputs.d}} ${{outputs.o}}", map[string]string{"lr": "0.01"})
	if err != nil || got != "a 0.01 b 0.01 ${{inputs.d}} ${{outputs.o}}" {
		t.Fatalf("got %q, %v", got, err)
	}
	_, err = sweepjob.SubstituteSearchSpace("a ${{search_space.mom}}", map[string]string{"lr": "0.01"})
	if core.ErrorField(err) != "trial.command" || !strings.Contains(core.ErrorMessage(err), "declared: lr") {
		t.Fatalf("unknown parameter: %v", err)
	}
}

// TestTrialKeepsItsCodeVersion: a trial packed from a registered code
// version says so (code_asset), as its sweep does, so Azure's SDK reads
// the trial back with that version's id rather than Shoal's artifact.
func TestTrialKeepsItsCodeVersion(t *testing.T) {
	spec := &job.SweepSpec{Trial: &job.SweepTrial{Command: "python t.py", Code: "art-1", CodeAsset: "src:1"}}
	js, err := sweepjob.TrialJobSpec(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js.Code != "art-1" || js.CodeAsset != "src:1" {
		t.Errorf("trial code %q, code_asset %q; want art-1 and src:1", js.Code, js.CodeAsset)
	}
}

package sweepjob_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

var sweepFuzzSeeds = []string{
	``, `null`, `[]`, `{"type": "sweep"}`, `{"type": "sweep", "trial": []}`,
	`{"type": "sweep", "trial": {"command": "x ${{search_space.a}}"}, "search_space": {"a": {"type": "choice", "values": [1, "b", true]}}, "sampling_algorithm": "grid", "objective": {"primary_metric": "m", "goal": "minimize"}, "compute": "cpu-cluster"}`,
	`{"type": "sweep", "trial": {"command": "x ${{search_space.a}}"}, "search_space": {"a": {"type": "qlognormal", "mu": 1, "sigma": 2, "q": 0.5}}, "sampling_algorithm": {"type": "random", "seed": -3}, "objective": {"primary_metric": "m", "goal": "MAXIMIZE"}, "compute": "cpu-cluster", "early_termination": {"type": "truncation_selection", "truncation_percentage": 20, "delay_evaluation": 5}}`,
	`{"type": "sweep", "search_space": {"a": {"type": "randint", "upper": 1e30}}, "limits": {"timeout": "PT1H", "max_total_trials": 1e3}}`,
}

func FuzzDecodeSweepSpec(f *testing.F) {
	for _, s := range sweepFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(azureSweepJob))
	f.Fuzz(func(t *testing.T, doc []byte) {
		spec, err := sweepjob.DecodeSweepSpec(doc)
		if err != nil {
			coretest.FuzzCheckError(t, "DecodeSweepSpec", doc, err)
			return
		}
		if err := sweepjob.NormalizeSweepSpec(spec); err != nil {
			coretest.FuzzCheckError(t, "NormalizeSweepSpec", doc, err)
			return
		}
		if spec.Limits == nil || spec.Limits.MaxTotalTrials < 1 || spec.Limits.MaxConcurrentTrials > spec.Limits.MaxTotalTrials {
			t.Fatalf("limits not normalised: %+v", spec.Limits)
		}
		values := map[string]string{}
		for k := range spec.SearchSpace {
			values[k] = "1"
		}
		js, err := sweepjob.TrialJobSpec(spec, values)
		if err != nil {
			t.Fatalf("trial job: %v", err)
		}
		if err := job.NormalizeJobSpec(js); err != nil {
			t.Fatalf("the trial's job is refused: %v", err)
		}
		out, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := sweepjob.DecodeSweepSpec(out)
		if err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
		if err := sweepjob.NormalizeSweepSpec(again); err != nil {
			t.Fatalf("normalise %s again: %v", out, err)
		}
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", out, out2)
		}
	})
}

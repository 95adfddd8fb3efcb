package sweep

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

func f(v float64) *float64 { return &v }
func i64(v int64) *int64   { return &v }

func TestSampleEveryDistribution(t *testing.T) {
	const n = 4000
	for _, tc := range []struct {
		name  string
		p     job.SearchParam
		check func(t *testing.T, xs []any)
	}{
		{"choice", job.SearchParam{Type: "choice", Values: []any{"rbf", json.Number("0.5"), true}}, func(t *testing.T, xs []any) {
			seen := map[string]int{}
			for _, x := range xs {
				seen[FormatValue(x)]++
			}
			if len(seen) != 3 || seen["rbf"] < n/4 || seen["0.5"] < n/4 || seen["True"] < n/4 {
				t.Fatalf("choice counts %v", seen)
			}
		}},
		{"randint", job.SearchParam{Type: "randint", Upper: i64(5)}, func(t *testing.T, xs []any) {
			seen := map[int64]bool{}
			for _, x := range xs {
				v := x.(int64)
				if v < 0 || v >= 5 {
					t.Fatalf("randint %d outside [0, 5)", v)
				}
				seen[v] = true
			}
			if len(seen) != 5 {
				t.Fatalf("randint values %v", seen)
			}
		}},
		{"uniform", job.SearchParam{Type: "uniform", MinValue: f(0.5), MaxValue: f(0.9)}, stats(0.5, 0.9, 0.7, 0.4/math.Sqrt(12), false)},
		{"loguniform", job.SearchParam{Type: "loguniform", MinValue: f(-6), MaxValue: f(-2)}, stats(math.Exp(-6), math.Exp(-2), -4, 4/math.Sqrt(12), true)},
		{"normal", job.SearchParam{Type: "normal", Mu: f(10), Sigma: f(3)}, stats(math.Inf(-1), math.Inf(1), 10, 3, false)},
		{"lognormal", job.SearchParam{Type: "lognormal", Mu: f(0), Sigma: f(0.5)}, stats(0, math.Inf(1), 0, 0.5, true)},
		{"quniform", job.SearchParam{Type: "quniform", MinValue: f(0.1), MaxValue: f(1), Q: f(0.1)}, multiples(0.1, 0.1, 1)},
		{"qloguniform", job.SearchParam{Type: "qloguniform", MinValue: f(0), MaxValue: f(4), Q: f(5)}, multiples(5, 0, 55)},
		{"qnormal", job.SearchParam{Type: "qnormal", Mu: f(32), Sigma: f(8), Q: f(4)}, multiples(4, math.Inf(-1), math.Inf(1))},
		{"qlognormal", job.SearchParam{Type: "qlognormal", Mu: f(2), Sigma: f(0.5), Q: f(0.5)}, multiples(0.5, 0, math.Inf(1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := trialRand(7, 0)
			xs := make([]any, n)
			for i := range xs {
				xs[i] = sampleParam(&tc.p, r)
			}
			tc.check(t, xs)
		})
	}
}

// stats checks bounds, and the mean and standard deviation of the values
// (of their logarithms when logs) within 5% of the range or of sd.
func stats(low, high, mean, sd float64, logs bool) func(*testing.T, []any) {
	return func(t *testing.T, xs []any) {
		var s, s2 float64
		for _, x := range xs {
			v := x.(float64)
			if v < low || v > high {
				t.Fatalf("%g outside [%g, %g]", v, low, high)
			}
			if logs {
				v = math.Log(v)
			}
			s, s2 = s+v, s2+v*v
		}
		n := float64(len(xs))
		m := s / n
		d := math.Sqrt(s2/n - m*m)
		if math.Abs(m-mean) > 0.1*sd || math.Abs(d-sd) > 0.05*sd {
			t.Fatalf("mean %g sd %g, want %g and %g", m, d, mean, sd)
		}
	}
}

// multiples checks that every value is a multiple of q, rendered without
// binary noise, within [low, high], and that several values occur.
func multiples(q, low, high float64) func(*testing.T, []any) {
	return func(t *testing.T, xs []any) {
		seen := map[float64]bool{}
		for _, x := range xs {
			v := x.(float64)
			if r := v / q; math.Abs(r-math.Round(r)) > 1e-9 || v < low || v > high {
				t.Fatalf("%v is not a multiple of %g in [%g, %g]", v, q, low, high)
			}
			if s := FormatValue(v); len(s) > 12 {
				t.Fatalf("%v renders as %q", v, s)
			}
			seen[v] = true
		}
		if len(seen) < 3 {
			t.Fatalf("only %v", seen)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{0.01, "0.01"}, {3.0, "3"}, {-0.0, "0"}, {1e-05, "1e-05"},
		{int64(7), "7"}, {json.Number("1e-3"), "1e-3"}, {"rbf", "rbf"}, {true, "True"}, {2.5e20, "2.5e+20"},
	} {
		if got := FormatValue(tc.v); got != tc.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	p := &job.SearchParam{Type: "quniform", Q: f(0.1)}
	if got := FormatValue(quantize(p, 0.3)); got != "0.3" {
		t.Errorf("quantize 0.3 renders %q", got)
	}
}

func space() map[string]*job.SearchParam {
	return map[string]*job.SearchParam{
		"lr":     {Type: "loguniform", MinValue: f(-7), MaxValue: f(-1)},
		"kernel": {Type: "choice", Values: []any{"rbf", "linear"}},
		"layers": {Type: "randint", Upper: i64(8)},
	}
}

func TestRandomSamplerDeterministic(t *testing.T) {
	run := func(seed int64, n int) []Params {
		s := &RandomSampler{Space: space(), Seed: seed, MaxTrials: n}
		var hist []Trial
		for {
			p, ok := s.Next(hist)
			if !ok {
				break
			}
			hist = append(hist, Trial{Params: p, State: Running})
		}
		out := make([]Params, len(hist))
		for i, h := range hist {
			out[i] = h.Params
		}
		return out
	}
	a, b, c := run(42, 12), run(42, 12), run(43, 12)
	if len(a) != 12 || !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different trials:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same trials")
	}
	// Trial k does not depend on what the earlier trials did.
	s := &RandomSampler{Space: space(), Seed: 42, MaxTrials: 12}
	hist := make([]Trial, 5)
	for i := range hist {
		hist[i] = Trial{ID: "x", State: Completed, Metrics: []float64{float64(i)}}
	}
	if p, _ := s.Next(hist); !reflect.DeepEqual(p, a[5]) {
		t.Fatalf("trial 5 depends on history: %v vs %v", p, a[5])
	}
	distinct := map[string]bool{}
	for _, p := range a {
		distinct[FormatValue(p["lr"])] = true
	}
	if len(distinct) != 12 {
		t.Fatalf("lr values repeat: %v", distinct)
	}
}

func TestNewFromSpec(t *testing.T) {
	spec := &job.SweepSpec{Type: "sweep", SearchSpace: space(), Limits: &job.SweepLimits{MaxTotalTrials: 3},
		SamplingAlgorithm: &job.SamplingAlgorithm{Type: "random", Seed: i64(9)}, Objective: &job.Objective{Goal: "maximize"}}
	s, err := New(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.(*RandomSampler).Seed != 9 {
		t.Fatal("the spec's seed is not used")
	}
	spec.SamplingAlgorithm = &job.SamplingAlgorithm{Type: "bayesian"}
	if s, err = New(spec, 5); err != nil || s.(*BayesianSampler).Seed != 5 {
		t.Fatalf("bayesian: %v %v", s, err)
	}
	spec.SamplingAlgorithm = &job.SamplingAlgorithm{Type: "grid"}
	if _, err = New(spec, 5); core.ErrorField(err) != "search_space.layers.type" {
		t.Fatalf("grid over randint: %v", err)
	}
}

func TestGridOrderAndCap(t *testing.T) {
	sp := map[string]*job.SearchParam{
		"bs": {Type: "choice", Values: []any{json.Number("16"), json.Number("32")}},
		"a":  {Type: "choice", Values: []any{"x", "y", "z"}},
	}
	g, err := NewGrid(sp, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var hist []Trial
	for {
		p, ok := g.Next(hist)
		if !ok {
			break
		}
		hist = append(hist, Trial{Params: p})
		got = append(got, FormatValue(p["a"])+"/"+FormatValue(p["bs"]))
	}
	want := []string{"x/16", "x/32", "y/16", "y/32", "z/16", "z/32"}
	if !reflect.DeepEqual(got, want) || g.Len() != 6 {
		t.Fatalf("grid order %v, want %v", got, want)
	}
	g, _ = NewGrid(sp, 4)
	if g.Len() != 4 {
		t.Fatalf("max_total_trials does not cap: %d", g.Len())
	}
	if _, ok := g.Next(make([]Trial, 4)); ok {
		t.Fatal("a capped grid gives a fifth trial")
	}
}

func TestBest(t *testing.T) {
	trials := []Trial{
		{ID: "a", State: Completed, Metrics: []float64{0.5, 0.7}},
		{ID: "b", State: Ended, Metrics: []float64{0.99}},         // cancelled: does not count
		{ID: "c", State: Completed, Metrics: []float64{0.9, 0.6}}, // its last value counts
		{ID: "d", State: Completed, Metrics: []float64{0.7}},
		{ID: "e", State: Completed},
		{ID: "f", State: Running, Metrics: []float64{1}},
	}
	if got := Best(job.GoalMaximize, trials); got != 0 {
		t.Fatalf("maximize: best %d, want 0 (a; d ties and started later)", got)
	}
	if got := Best(job.GoalMinimize, trials); got != 2 {
		t.Fatalf("minimize: best %d, want 2", got)
	}
	if got := Best(job.GoalMaximize, trials[4:]); got != -1 {
		t.Fatalf("no completed metric: %d", got)
	}
}

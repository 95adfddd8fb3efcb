package sweep

import (
	"math"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// runToy runs a sequential sweep of n trials over a toy objective and
// returns the regret of the best trial found (how far from the optimum).
func runToy(s Sampler, n int, objective func(Params) float64, optimum float64) float64 {
	var hist []Trial
	for len(hist) < n {
		p, ok := s.Next(hist)
		if !ok {
			break
		}
		hist = append(hist, Trial{ID: string(rune('a' + len(hist))), Params: p, State: Completed, Metrics: []float64{objective(p)}})
	}
	return optimum - hist[Best(job.GoalMaximize, hist)].Metrics[0]
}

// TestTPEBeatsRandom checks, over fixed seeds, that TPE finds a better
// trial than random sampling on a 1-D objective, on average by a wide
// margin and in most seeds. A TPE that learned nothing (or learned
// backwards) would tie or lose.
func TestTPEBeatsRandom(t *testing.T) {
	sp := map[string]*job.SearchParam{"x": {Type: "uniform", MinValue: f(0), MaxValue: f(10)}}
	objective := func(p Params) float64 {
		x := p["x"].(float64)
		return 1 - (x-7.3)*(x-7.3)/10
	}
	const seeds, trials = 30, 40
	var tpeTotal, randTotal float64
	wins := 0
	for seed := int64(1); seed <= seeds; seed++ {
		rt := runToy(&RandomSampler{Space: sp, Seed: seed, MaxTrials: trials}, trials, objective, 1)
		tt := runToy(&BayesianSampler{Space: sp, Seed: seed, MaxTrials: trials, Goal: job.GoalMaximize}, trials, objective, 1)
		tpeTotal += tt
		randTotal += rt
		if tt < rt {
			wins++
		}
	}
	t.Logf("mean regret: TPE %.5f, random %.5f; TPE better in %d of %d seeds", tpeTotal/seeds, randTotal/seeds, wins, seeds)
	if tpeTotal > randTotal/3 || wins < seeds*2/3 {
		t.Fatalf("TPE does not beat random: mean regret %.5f vs %.5f, better in %d of %d seeds", tpeTotal/seeds, randTotal/seeds, wins, seeds)
	}
}

func TestTPEChoiceAndMinimize(t *testing.T) {
	sp := map[string]*job.SearchParam{
		"opt": {Type: "choice", Values: []any{"sgd", "adam", "rmsprop", "adagrad"}},
		"q":   {Type: "quniform", MinValue: f(0), MaxValue: f(20), Q: f(2)},
	}
	// Loss is lowest for adam and q near 8.
	loss := func(p Params) float64 {
		l := math.Abs(p["q"].(float64) - 8)
		if p["opt"] != "adam" {
			l += 5
		}
		return l
	}
	s := &BayesianSampler{Space: sp, Seed: 3, MaxTrials: 40, Goal: job.GoalMinimize}
	var hist []Trial
	adam := 0
	for len(hist) < 40 {
		p, _ := s.Next(hist)
		if q := p["q"].(float64); math.Mod(q, 2) != 0 || q < 0 || q > 20 {
			t.Fatalf("q %v is not a multiple of 2 in [0, 20]", q)
		}
		if len(hist) >= BayesianStartup && p["opt"] == "adam" {
			adam++
		}
		hist = append(hist, Trial{Params: p, State: Completed, Metrics: []float64{loss(p)}})
	}
	// Random would pick adam in a quarter of the 30 guided trials.
	if adam < 15 {
		t.Fatalf("TPE picked adam in %d of 30 guided trials", adam)
	}
	if b := hist[Best(job.GoalMinimize, hist)]; b.Metrics[0] > 0 {
		t.Fatalf("best loss %v (%v), want 0", b.Metrics[0], b.Params)
	}
}

package sweep

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

func ids(cs []Cancel) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.TrialID)
	}
	return out
}

// flat returns n intervals of v.
func flat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestBanditAzureExamples follows Azure ML's examples: "a Bandit policy
// applied at interval 10 ... the best performing trial at interval 10
// reported a primary metric 0.8 with a goal to maximize ... slack_factor
// of 0.2, any training trials whose best metric at interval 10 is less
// than 0.66 (0.8/(1+slack_factor)) will be terminated", and with
// slack_amount 0.2 "any run with an AUC less than 0.6 (0.8 - 0.2)".
func TestBanditAzureExamples(t *testing.T) {
	trials := []Trial{
		{ID: "best", State: Completed, Metrics: flat(0.8, 10)},
		{ID: "t065", State: Running, Metrics: flat(0.65, 10)},
		{ID: "t067", State: Running, Metrics: flat(0.67, 10)},
		{ID: "t059", State: Running, Metrics: flat(0.59, 10)},
		{ID: "t061", State: Running, Metrics: append(flat(0.5, 9), 0.61)},
		{ID: "young", State: Running, Metrics: flat(0.1, 9)}, // has not reached interval 10
	}
	factor := &job.EarlyTermination{Type: "bandit", EvaluationInterval: 10, SlackFactor: f(0.2)}
	got := Evaluate(factor, job.GoalMaximize, trials)
	if want := []string{"t065", "t059", "t061"}; !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("slack_factor cancels %v, want %v", ids(got), want)
	}
	if c := got[0]; c.Reason != ReasonBanditSlack || c.Interval != 10 ||
		c.Message != "bandit: 0.65 at interval 10 is outside slack_factor 0.2 of the best 0.8 (the limit is 0.6667)" {
		t.Fatalf("decision %+v", c)
	}
	amount := &job.EarlyTermination{Type: "bandit", EvaluationInterval: 10, SlackAmount: f(0.2)}
	if got := ids(Evaluate(amount, job.GoalMaximize, trials)); !reflect.DeepEqual(got, []string{"t059"}) {
		t.Fatalf("slack_amount cancels %v, want [t059]", got)
	}
	// Minimizing, the slack is above the best: 0.1*(1+0.2) = 0.12.
	low := []Trial{
		{ID: "a", State: Running, Metrics: []float64{0.1}},
		{ID: "b", State: Running, Metrics: []float64{0.119}},
		{ID: "c", State: Running, Metrics: []float64{0.13}},
	}
	minF := &job.EarlyTermination{Type: "bandit", EvaluationInterval: 1, SlackFactor: f(0.2)}
	if got := ids(Evaluate(minF, job.GoalMinimize, low)); !reflect.DeepEqual(got, []string{"c"}) {
		t.Fatalf("minimize cancels %v, want [c]", got)
	}
}

// TestDelayEvaluation: "the policy applies every multiple of
// evaluation_interval that is greater than or equal to
// delay_evaluation"; Azure's example is evaluation_interval 1 and
// delay_evaluation 5, "applied at every interval starting at 5".
func TestDelayEvaluation(t *testing.T) {
	p := &job.EarlyTermination{Type: "bandit", EvaluationInterval: 1, DelayEvaluation: 5, SlackFactor: f(0.1)}
	for _, tc := range []struct {
		n    int
		want bool
	}{{1, false}, {4, false}, {5, true}, {6, true}} {
		trials := []Trial{{ID: "good", State: Running, Metrics: flat(0.9, tc.n)}, {ID: "bad", State: Running, Metrics: flat(0.1, tc.n)}}
		if got := len(Evaluate(p, job.GoalMaximize, trials)) == 1; got != tc.want {
			t.Errorf("interval %d: cancelled %v, want %v", tc.n, got, tc.want)
		}
	}
	// evaluation_interval 3, delay 4: evaluations at 6, 9, ...; a trial
	// with 8 values is judged at 6, by its first 6 values only.
	p = &job.EarlyTermination{Type: "bandit", EvaluationInterval: 3, DelayEvaluation: 4, SlackAmount: f(0.1)}
	for _, tc := range []struct {
		n        int
		interval int
	}{{5, 0}, {6, 6}, {8, 6}, {9, 9}} {
		bad := flat(0.1, tc.n)
		for i := 6; i < tc.n; i++ {
			bad[i] = 0.95 // improves after interval 6
		}
		trials := []Trial{
			{ID: "good", State: Completed, Metrics: flat(0.9, 10)},
			{ID: "bad", State: Running, Metrics: bad},
		}
		got := Evaluate(p, job.GoalMaximize, trials)
		switch {
		case tc.interval == 0 && len(got) != 0:
			t.Errorf("%d values: judged at %d", tc.n, got[0].Interval)
		case tc.interval == 6 && (len(got) != 1 || got[0].Interval != 6):
			t.Errorf("%d values: %+v, want a cancel at interval 6", tc.n, got)
		case tc.interval == 9 && len(got) != 0:
			// By interval 9 its best (0.95) is within the slack.
			t.Errorf("%d values: %+v, want no cancel at interval 9", tc.n, got)
		}
	}
}

// TestMedianStoppingAzureExample: "a run will be terminated at interval
// 5 if its best primary metric is worse than the median of the running
// averages over intervals 1:5 across all training runs".
func TestMedianStoppingAzureExample(t *testing.T) {
	trials := []Trial{
		{ID: "a", State: Completed, Metrics: []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95}}, // average 0.7 over 1..5
		{ID: "b", State: Running, Metrics: []float64{0.6, 0.6, 0.6, 0.6, 0.6}},         // 0.6
		{ID: "c", State: Running, Metrics: []float64{0.1, 0.2, 0.3, 0.4, 0.65}},        // 0.33, best 0.65
		{ID: "d", State: Running, Metrics: []float64{0.2, 0.2, 0.2, 0.2, 0.2}},         // 0.2
		{ID: "e", State: Running, Metrics: []float64{0.2, 0.2, 0.2, 0.2}},              // not at 5 yet
	}
	// Running averages at 5: 0.7, 0.6, 0.33, 0.2: median (0.6+0.33)/2 = 0.465.
	p := &job.EarlyTermination{Type: "median_stopping", EvaluationInterval: 1, DelayEvaluation: 5}
	got := Evaluate(p, job.GoalMaximize, trials)
	if !reflect.DeepEqual(ids(got), []string{"d"}) {
		t.Fatalf("cancels %v, want [d]", ids(got))
	}
	if c := got[0]; c.Reason != ReasonBelowMedian || !strings.Contains(c.Message, "median 0.465") {
		t.Fatalf("decision %+v", c)
	}
	// Minimizing the same values, the trials with the highest best are out.
	got = Evaluate(p, job.GoalMinimize, trials)
	if !reflect.DeepEqual(ids(got), []string{"b"}) {
		t.Fatalf("minimize cancels %v, want [b]", ids(got))
	}
}

// TestTruncationSelectionAzureExample: with truncation_percentage 20,
// evaluation_interval 1 and delay_evaluation 5, "a trial is terminated
// at interval 5 if its performance at interval 5 is in the lowest 20% of
// performance of all trials at interval 5".
func TestTruncationSelectionAzureExample(t *testing.T) {
	trials := []Trial{
		{ID: "a", State: Running, Metrics: []float64{0.9, 0.9, 0.9, 0.9, 0.5}},
		{ID: "b", State: Running, Metrics: []float64{0, 0, 0, 0, 0.6}},
		{ID: "c", State: Completed, Metrics: []float64{0, 0, 0, 0, 0.4, 0.9}},
		{ID: "d", State: Running, Metrics: []float64{0, 0, 0, 0, 0.7}},
		{ID: "e", State: Running, Metrics: []float64{0, 0, 0, 0, 0.45}},
		{ID: "f", State: Running, Metrics: []float64{0, 0, 0, 0, 0.8, 0.1, 0.1}},
		{ID: "g", State: Running, Metrics: []float64{0, 0, 0}},
	}
	p := &job.EarlyTermination{Type: "truncation_selection", EvaluationInterval: 1, DelayEvaluation: 5, TruncationPercentage: 20}
	// At 5 six trials (g has not reached it): 20% of 6 is 1, the worst
	// is c, which has completed; so nothing running is cut there. f is
	// judged at 7 where it is the only trial: nothing.
	if got := Evaluate(p, job.GoalMaximize, trials); len(got) != 0 {
		t.Fatalf("cancels %v, want none", ids(got))
	}
	p.TruncationPercentage = 40 // 2 of 6: c and e
	got := Evaluate(p, job.GoalMaximize, trials)
	if !reflect.DeepEqual(ids(got), []string{"e"}) {
		t.Fatalf("cancels %v, want [e]", ids(got))
	}
	if c := got[0]; c.Reason != ReasonTruncationSelection || c.Message != "truncation_selection: 0.45 at interval 5 is among the worst 40% (2 of 6 trials)" {
		t.Fatalf("decision %+v", c)
	}
	// Minimizing, the worst at 5 are the largest: d (0.7); f is judged at 7.
	got = Evaluate(p, job.GoalMinimize, trials)
	if !reflect.DeepEqual(ids(got), []string{"d"}) {
		t.Fatalf("minimize cancels %v, want [d]", ids(got))
	}
}

func TestEvaluateNothingToDo(t *testing.T) {
	p := &job.EarlyTermination{Type: "bandit", EvaluationInterval: 1, SlackFactor: f(0.1)}
	if got := Evaluate(nil, job.GoalMaximize, []Trial{{ID: "a", State: Running, Metrics: []float64{1}}}); got != nil {
		t.Fatal("no policy cancels")
	}
	// A trial alone is never outside its own slack; ended trials are not cancelled.
	trials := []Trial{{ID: "a", State: Running, Metrics: []float64{0.1}}, {ID: "b", State: Ended, Metrics: []float64{0.01}}, {ID: "c", State: Running}}
	if got := Evaluate(p, job.GoalMaximize, trials); len(got) != 0 {
		t.Fatalf("cancels %v", ids(got))
	}
}

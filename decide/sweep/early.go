package sweep

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/shoal-ml/shoal/domain/job"
)

// Reason says why early termination cancels a trial.
type Reason string

// Reasons, one per policy.
const (
	ReasonBanditSlack         Reason = "BanditSlack"
	ReasonBelowMedian         Reason = "BelowMedian"
	ReasonTruncationSelection Reason = "TruncationSelection"
)

// Cancel is the decision to cancel one running trial.
type Cancel struct {
	TrialID string
	// Interval is the evaluation interval the trial was judged at.
	Interval int
	Reason   Reason
	// Message is a sentence for the trial's status reason.
	Message string
}

// Evaluate applies an early termination policy of a normalised spec to
// the trials of a sweep and returns the running trials to cancel, in the
// order of trials. It follows Azure ML's documented semantics (the
// "Early termination" section of "Hyperparameter tuning a model",
// learn.microsoft.com/azure/machine-learning/how-to-tune-hyperparameters,
// and the BanditPolicy, MedianStoppingPolicy and
// TruncationSelectionPolicy references):
//
//   - An interval is one value of the primary metric logged by a trial
//     ("each time the training script logs the primary metric counts as
//     one interval"). The policy applies at every multiple of
//     evaluation_interval that is greater than or equal to
//     delay_evaluation. A running trial is judged at the last such
//     interval it has reached, so calling Evaluate again without new
//     values gives the same answer.
//   - At interval N a trial is compared with the trials (running or
//     not) that reached N, using their values up to N only ("when
//     evaluating a run at interval N, its performance is only compared
//     with the performance of other runs up to interval N").
//   - bandit: a trial whose best value up to N is not within the slack
//     of the best trial's is cancelled. With slack_factor s and goal
//     maximize the limit is best/(1+s) ("any training trials whose best
//     metric at interval 10 is less than 0.66 (0.8/(1+slack_factor))
//     will be terminated"), with minimize best*(1+s); with slack_amount
//     a it is best-a, or best+a when minimizing. slack_factor assumes
//     a positive metric, as Azure ML's does.
//   - median_stopping: a trial whose best value up to N is worse than
//     the median of the running averages over intervals 1..N of all
//     trials is cancelled.
//   - truncation_selection: the trials' values at interval N are ranked
//     and the worst truncation_percentage percent, rounded down, are
//     cancelled (ties ranked by trial ID, so the answer is stable).
func Evaluate(policy *job.EarlyTermination, goal string, trials []Trial) []Cancel {
	if policy == nil || len(trials) == 0 {
		return nil
	}
	every := policy.EvaluationInterval
	if every < 1 {
		every = 1
	}
	var out []Cancel
	for _, t := range trials {
		if t.State != Running {
			continue
		}
		n := len(t.Metrics) / every * every
		if n == 0 || n < policy.DelayEvaluation {
			continue
		}
		var peers []Trial
		for _, p := range trials {
			if len(p.Metrics) >= n {
				peers = append(peers, p)
			}
		}
		var c *Cancel
		switch policy.Type {
		case job.PolicyBandit:
			c = bandit(policy, goal, t, peers, n)
		case job.PolicyMedianStopping:
			c = medianStopping(goal, t, peers, n)
		case job.PolicyTruncationSelection:
			c = truncation(policy, goal, t, peers, n)
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// bestUpTo is the best of a trial's first n values (NaN ignored).
func bestUpTo(goal string, t Trial, n int) (float64, bool) {
	var best float64
	found := false
	for _, v := range t.Metrics[:n] {
		if math.IsNaN(v) {
			continue
		}
		if !found || better(goal, v, best) {
			best, found = v, true
		}
	}
	return best, found
}

func bandit(p *job.EarlyTermination, goal string, t Trial, peers []Trial, n int) *Cancel {
	own, ok := bestUpTo(goal, t, n)
	if !ok {
		return nil
	}
	var top float64
	found := false
	for _, q := range peers {
		if v, ok := bestUpTo(goal, q, n); ok && (!found || better(goal, v, top)) {
			top, found = v, true
		}
	}
	var limit float64
	var slack string
	switch {
	case p.SlackFactor != nil && goal == job.GoalMinimize:
		limit, slack = top*(1+*p.SlackFactor), "slack_factor "+num(*p.SlackFactor)
	case p.SlackFactor != nil:
		limit, slack = top/(1+*p.SlackFactor), "slack_factor "+num(*p.SlackFactor)
	case p.SlackAmount != nil && goal == job.GoalMinimize:
		limit, slack = top+*p.SlackAmount, "slack_amount "+num(*p.SlackAmount)
	case p.SlackAmount != nil:
		limit, slack = top-*p.SlackAmount, "slack_amount "+num(*p.SlackAmount)
	default:
		return nil
	}
	if !better(goal, limit, own) {
		return nil
	}
	return &Cancel{TrialID: t.ID, Interval: n, Reason: ReasonBanditSlack, Message: fmt.Sprintf(
		"bandit: %s at interval %d is outside %s of the best %s (the limit is %s)", num(own), n, slack, num(top), num(limit))}
}

func medianStopping(goal string, t Trial, peers []Trial, n int) *Cancel {
	own, ok := bestUpTo(goal, t, n)
	if !ok {
		return nil
	}
	var avgs []float64
	for _, q := range peers {
		s, c := 0.0, 0
		for _, v := range q.Metrics[:n] {
			if !math.IsNaN(v) {
				s, c = s+v, c+1
			}
		}
		if c > 0 {
			avgs = append(avgs, s/float64(c))
		}
	}
	if len(avgs) == 0 {
		return nil
	}
	sort.Float64s(avgs)
	median := avgs[len(avgs)/2]
	if len(avgs)%2 == 0 {
		median = (avgs[len(avgs)/2-1] + avgs[len(avgs)/2]) / 2
	}
	if !better(goal, median, own) {
		return nil
	}
	return &Cancel{TrialID: t.ID, Interval: n, Reason: ReasonBelowMedian, Message: fmt.Sprintf(
		"median_stopping: best %s by interval %d is worse than the median %s of the running averages of %d trials", num(own), n, num(median), len(avgs))}
}

func truncation(p *job.EarlyTermination, goal string, t Trial, peers []Trial, n int) *Cancel {
	type ranked struct {
		id string
		v  float64
	}
	var rs []ranked
	for _, q := range peers {
		if v := q.Metrics[n-1]; !math.IsNaN(v) {
			rs = append(rs, ranked{q.ID, v})
		}
	}
	// Worst first; equal values by ID.
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].v != rs[j].v {
			return better(goal, rs[j].v, rs[i].v)
		}
		return rs[i].id < rs[j].id
	})
	k := len(rs) * p.TruncationPercentage / 100
	for i := 0; i < k; i++ {
		if rs[i].id == t.ID {
			return &Cancel{TrialID: t.ID, Interval: n, Reason: ReasonTruncationSelection, Message: fmt.Sprintf(
				"truncation_selection: %s at interval %d is among the worst %d%% (%d of %d trials)", num(rs[i].v), n, p.TruncationPercentage, k, len(rs))}
		}
	}
	return nil
}

// num writes a metric value briefly and stably.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

package sweep

import "math"

// finalValue is the last value of the primary metric a trial logged.
func finalValue(t Trial) (float64, bool) {
	if len(t.Metrics) == 0 || math.IsNaN(t.Metrics[len(t.Metrics)-1]) {
		return 0, false
	}
	return t.Metrics[len(t.Metrics)-1], true
}

// Best returns the index in trials of the best trial: among the
// completed trials that logged the primary metric, the one whose last
// logged value is best for goal (the model a completed trial leaves is
// its last one). Ties go to the trial started first. It returns -1 when
// no completed trial logged the metric.
func Best(goal string, trials []Trial) int {
	best := -1
	var bestV float64
	for i, t := range trials {
		v, ok := finalValue(t)
		if !ok || t.State != Completed {
			continue
		}
		if best < 0 || better(goal, v, bestV) {
			best, bestV = i, v
		}
	}
	return best
}

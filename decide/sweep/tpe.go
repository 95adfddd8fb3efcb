package sweep

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/shoal-ml/shoal/domain/job"
)

// Settings of the tree-structured Parzen estimator.
const (
	// BayesianStartup is the number of completed trials before TPE
	// takes over from random sampling.
	BayesianStartup = 10
	// tpeGamma is the share of completed trials counted as good.
	tpeGamma = 0.25
	// tpeCandidates is the number of draws from the good density
	// among which the best ratio good/bad is taken.
	tpeCandidates = 24
)

// BayesianSampler is a tree-structured Parzen estimator (see the package
// documentation). Trial k's draws use a generator seeded with (Seed, k).
type BayesianSampler struct {
	Space     map[string]*job.SearchParam
	Seed      int64
	MaxTrials int
	// Goal is shoal.GoalMaximize or shoal.GoalMinimize.
	Goal string
}

// observation is a completed trial's parameters and final metric.
type observation struct {
	params Params
	value  float64
}

// Next implements Sampler.
func (s *BayesianSampler) Next(history []Trial) (Params, bool) {
	k := len(history)
	if k >= s.MaxTrials {
		return nil, false
	}
	r := trialRand(s.Seed, k)
	var obs []observation
	for _, t := range history {
		if v, ok := finalValue(t); ok && t.State == Completed {
			obs = append(obs, observation{t.Params, v})
		}
	}
	if len(obs) < BayesianStartup {
		return randomParams(s.Space, r), true
	}
	// Best first; ties keep the order trials were started in.
	sort.SliceStable(obs, func(i, j int) bool { return better(s.Goal, obs[i].value, obs[j].value) })
	nGood := int(math.Ceil(tpeGamma * float64(len(obs))))
	good, bad := obs[:nGood], obs[nGood:]
	p := make(Params, len(s.Space))
	for _, n := range names(s.Space) {
		sp := s.Space[n]
		switch sp.Type {
		case job.DistChoice:
			p[n] = tpeChoice(sp, n, good, bad, r)
		case job.DistUniform, job.DistQUniform:
			p[n] = tpeUniform(sp, n, good, bad, r)
		default:
			// NormalizeSweepSpec refuses other distributions for
			// bayesian sampling; a Go caller's spec gets a random value.
			p[n] = sampleParam(sp, r)
		}
	}
	return p, true
}

// better reports whether a is a better value of the primary metric than b.
func better(goal string, a, b float64) bool {
	if goal == job.GoalMinimize {
		return a < b
	}
	return a > b
}

func tpeChoice(sp *job.SearchParam, name string, good, bad []observation, r *rand.Rand) any {
	// Counts plus one: a value never tried keeps a chance.
	index := func(v any) int {
		for i, c := range sp.Values {
			if FormatValue(c) == FormatValue(v) {
				return i
			}
		}
		return -1
	}
	weights := func(obs []observation) []float64 {
		w := make([]float64, len(sp.Values))
		for i := range w {
			w[i] = 1
		}
		for _, o := range obs {
			if i := index(o.params[name]); i >= 0 {
				w[i]++
			}
		}
		return w
	}
	l, g := weights(good), weights(bad)
	sumL, sumG := sum(l), sum(g)
	bestI, bestScore := -1, math.Inf(-1)
	for c := 0; c < tpeCandidates; c++ {
		x := r.Float64() * sumL
		i := 0
		for ; i < len(l)-1 && x >= l[i]; i++ {
			x -= l[i]
		}
		if score := math.Log(l[i]/sumL) - math.Log(g[i]/sumG); score > bestScore {
			bestI, bestScore = i, score
		}
	}
	return sp.Values[bestI]
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// parzen is a mixture of normals truncated to [low, high].
type parzen struct {
	mus, sigmas, weights []float64
	low, high            float64
}

// newParzen fits hyperopt's adaptive Parzen estimator to points: a
// normal at each point whose width is the larger gap to its neighbours
// (the bounds count as neighbours), clipped to [range/min(100, n+1),
// range], and a prior normal at the middle as wide as the range.
func newParzen(points []float64, low, high float64) *parzen {
	width := high - low
	pz := &parzen{low: low, high: high}
	pz.mus = append(pz.mus, (low+high)/2)
	pz.sigmas = append(pz.sigmas, width)
	pz.weights = append(pz.weights, 1)
	sorted := append([]float64(nil), points...)
	sort.Float64s(sorted)
	minSigma := width / math.Min(100, float64(len(sorted)+1))
	for i, x := range sorted {
		left, right := low, high
		if i > 0 {
			left = sorted[i-1]
		}
		if i < len(sorted)-1 {
			right = sorted[i+1]
		}
		s := math.Max(x-left, right-x)
		s = math.Min(math.Max(s, minSigma), width)
		pz.mus = append(pz.mus, x)
		pz.sigmas = append(pz.sigmas, s)
		pz.weights = append(pz.weights, 1)
	}
	return pz
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// logDensity is the log of the truncated mixture's density at x.
func (pz *parzen) logDensity(x float64) float64 {
	total, wsum := 0.0, 0.0
	for i, mu := range pz.mus {
		s, w := pz.sigmas[i], pz.weights[i]
		mass := normCDF((pz.high-mu)/s) - normCDF((pz.low-mu)/s)
		if mass <= 0 {
			continue
		}
		z := (x - mu) / s
		total += w * math.Exp(-0.5*z*z) / (s * math.Sqrt(2*math.Pi) * mass)
		wsum += w
	}
	if total <= 0 || wsum == 0 {
		return math.Inf(-1)
	}
	return math.Log(total / wsum)
}

// sample draws from the truncated mixture: a component by weight, then a
// normal value redrawn until it falls inside the bounds.
func (pz *parzen) sample(r *rand.Rand) float64 {
	i := r.IntN(len(pz.mus)) // equal weights
	for try := 0; try < 100; try++ {
		x := pz.mus[i] + pz.sigmas[i]*r.NormFloat64()
		if x >= pz.low && x <= pz.high {
			return x
		}
	}
	return math.Min(math.Max(pz.mus[i], pz.low), pz.high)
}

func tpeUniform(sp *job.SearchParam, name string, good, bad []observation, r *rand.Rand) float64 {
	points := func(obs []observation) []float64 {
		var out []float64
		for _, o := range obs {
			if v, ok := o.params[name].(float64); ok {
				out = append(out, v)
			}
		}
		return out
	}
	low, high := *sp.MinValue, *sp.MaxValue
	l, g := newParzen(points(good), low, high), newParzen(points(bad), low, high)
	best, bestScore := 0.0, math.Inf(-1)
	for c := 0; c < tpeCandidates; c++ {
		x := quantize(sp, l.sample(r))
		if score := l.logDensity(x) - g.logDensity(x); score > bestScore || c == 0 {
			best, bestScore = x, score
		}
	}
	return best
}

package sweep

import (
	"math/rand/v2"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// State is where a trial stands, as the sweep's decisions need it.
type State string

// Trial states: a running trial (queued or running) may be cancelled by
// early termination; a completed trial counts for the best trial and for
// bayesian sampling; an ended trial (failed or cancelled) counts only
// through the metrics it logged.
const (
	Running   State = "Running"
	Completed State = "Completed"
	Ended     State = "Ended"
)

// Trial is one trial of a sweep as the decisions see it.
type Trial struct {
	// ID names the trial (its child job) in decisions.
	ID     string
	Params Params
	State  State
	// Metrics are the values of the primary metric in the order the
	// trial logged them: Metrics[i] is interval i+1, since Azure ML
	// counts each logged value of the primary metric as an interval.
	Metrics []float64
}

// Sampler chooses the hyperparameters of a sweep's next trial.
type Sampler interface {
	// Next returns the parameters of trial len(history), or false when
	// the sweep has no more trials to start (max_total_trials reached,
	// or the grid walked). history lists every trial started so far,
	// in the order they were started.
	Next(history []Trial) (Params, bool)
}

// New returns the sampler of a normalised sweep spec. seed is used when
// the spec gives none (grid sampling and bayesian sampling take no seed
// in Azure ML); the caller draws it once when the sweep is submitted and
// keeps it, so that a restarted control loop draws the same trials.
func New(spec *job.SweepSpec, seed int64) (Sampler, error) {
	if spec == nil || spec.SamplingAlgorithm == nil || spec.Limits == nil {
		return nil, core.Errorf(core.EINVALID, "the sweep spec is not normalised")
	}
	a := spec.SamplingAlgorithm
	if a.Seed != nil {
		seed = *a.Seed
	}
	limit := spec.Limits.MaxTotalTrials
	switch a.Type {
	case job.SamplingRandom:
		if a.Rule == job.RandomRuleSobol {
			return nil, core.FieldErrorf("sampling_algorithm.rule", "sobol is not supported")
		}
		return &RandomSampler{Space: spec.SearchSpace, Seed: seed, MaxTrials: limit}, nil
	case job.SamplingGrid:
		return NewGrid(spec.SearchSpace, limit)
	case job.SamplingBayesian:
		if spec.Objective == nil {
			return nil, core.FieldErrorf("objective", "is required")
		}
		return &BayesianSampler{Space: spec.SearchSpace, Seed: seed, MaxTrials: limit, Goal: spec.Objective.Goal}, nil
	}
	return nil, core.FieldErrorf("sampling_algorithm", "unknown sampling algorithm %q", a.Type)
}

// RandomSampler draws every hyperparameter from its distribution; trial
// k uses a generator seeded with (Seed, k).
type RandomSampler struct {
	Space     map[string]*job.SearchParam
	Seed      int64
	MaxTrials int
}

// Next implements Sampler.
func (s *RandomSampler) Next(history []Trial) (Params, bool) {
	k := len(history)
	if k >= s.MaxTrials {
		return nil, false
	}
	return randomParams(s.Space, trialRand(s.Seed, k)), true
}

func randomParams(space map[string]*job.SearchParam, r *rand.Rand) Params {
	p := make(Params, len(space))
	for _, n := range names(space) {
		p[n] = sampleParam(space[n], r)
	}
	return p
}

// GridSampler walks the cartesian product of choice values: parameters in
// name order, the last changing fastest, each parameter's values in the
// order written.
type GridSampler struct {
	names  []string
	values [][]any
	total  int
}

// NewGrid returns the grid of a search space of choice parameters,
// capped at maxTrials combinations.
func NewGrid(space map[string]*job.SearchParam, maxTrials int) (*GridSampler, error) {
	g := &GridSampler{names: names(space), total: 1}
	for _, n := range g.names {
		p := space[n]
		if p.Type != job.DistChoice || len(p.Values) == 0 {
			return nil, core.FieldErrorf("search_space."+n+".type", "grid sampling takes only choice hyperparameters")
		}
		g.values = append(g.values, p.Values)
		if g.total > maxTrials {
			continue // the cap already applies; no overflow
		}
		g.total *= len(p.Values)
	}
	if g.total > maxTrials {
		g.total = maxTrials
	}
	return g, nil
}

// Len returns the number of trials the grid gives.
func (g *GridSampler) Len() int { return g.total }

// Next implements Sampler.
func (g *GridSampler) Next(history []Trial) (Params, bool) {
	k := len(history)
	if k >= g.total {
		return nil, false
	}
	p := make(Params, len(g.names))
	for i := len(g.names) - 1; i >= 0; i-- {
		vs := g.values[i]
		p[g.names[i]] = vs[k%len(vs)]
		k /= len(vs)
	}
	return p, true
}

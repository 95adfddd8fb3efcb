package sweep

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/shoal-ml/shoal/domain/job"
)

// Params are one trial's hyperparameters: a choice value as written
// (string, bool or json.Number), an int64 for randint, a float64 for
// the continuous distributions and their q variants.
type Params map[string]any

// Render returns the text each hyperparameter stands for in the trial's
// command, ${{search_space.<name>}}: see FormatValue.
func (p Params) Render() map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = FormatValue(v)
	}
	return out
}

// FormatValue returns a hyperparameter's text: a choice value as the
// user wrote it (a boolean as Azure's Python writes it, True or False),
// integers without a fraction, other numbers in Go's
// shortest form that reads back as the same float64 (0.01, 1e-05),
// so that the same value always renders the same.
func FormatValue(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x+0, 'f', -1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return string(x)
	}
	return job.FormatInputValue(v)
}

// names returns the search space's hyperparameter names in order.
func names(space map[string]*job.SearchParam) []string {
	out := make([]string, 0, len(space))
	for k := range space {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// trialRand is the generator of trial k: the same seed and k give the
// same numbers.
func trialRand(seed int64, k int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(k)))
}

// sampleParam draws one value of p, as Azure ML defines its
// distributions: randint is uniform over 0..upper-1; loguniform is
// exp(uniform(min_value, max_value)); lognormal is exp(normal(mu,
// sigma)); a q variant is round(x/q)*q of the plain one.
func sampleParam(p *job.SearchParam, r *rand.Rand) any {
	switch p.Type {
	case job.DistChoice:
		return p.Values[r.IntN(len(p.Values))]
	case job.DistRandint:
		return r.Int64N(*p.Upper)
	}
	var x float64
	switch p.Type {
	case job.DistUniform, job.DistQUniform:
		x = *p.MinValue + r.Float64()*(*p.MaxValue-*p.MinValue)
	case job.DistLogUniform, job.DistQLogUniform:
		x = math.Exp(*p.MinValue + r.Float64()*(*p.MaxValue-*p.MinValue))
	case job.DistNormal, job.DistQNormal:
		x = *p.Mu + *p.Sigma*r.NormFloat64()
	case job.DistLogNormal, job.DistQLogNormal:
		x = math.Exp(*p.Mu + *p.Sigma*r.NormFloat64())
	}
	return quantize(p, x)
}

// quantize rounds x to a multiple of q for the q variants and drops the
// binary noise of the product (0.30000000000000004 becomes 0.3).
func quantize(p *job.SearchParam, x float64) float64 {
	if p.Q == nil {
		return x
	}
	x = math.Round(x / *p.Q) * *p.Q
	if f, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64); err == nil {
		x = f
	}
	return x + 0 // no -0
}

package schedule

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Tags a firing puts on the job it submits.
const (
	TagSchedule    = "shoal.schedule"
	TagTriggerTime = "shoal.schedule.trigger_time"
	TagLate        = "shoal.schedule.late"
)

// FiredJobName is the name of the job a schedule's firing at `at`
// submits: the schedule's name, lower-cased, and the firing's UTC minute
// ("nightly-20260301t0200"). The name is the firing's idempotency key:
// a job of that name already there means the firing was acted on (by
// this server before a restart, or by another before a failover).
func FiredJobName(schedule string, at time.Time) string {
	return strings.ToLower(schedule) + "-" + at.UTC().Format("20060102t1504")
}

// ExpandJob replaces, in every string of a job document, Azure's
// schedule expressions ${{name}} (the job's name) and
// ${{creation_context.trigger_time}} (the firing's time, RFC 3339 UTC).
func ExpandJob(doc json.RawMessage, jobName string, at time.Time) (json.RawMessage, error) {
	v, err := decodeAny(doc)
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer("${{name}}", jobName, "${{creation_context.trigger_time}}", at.UTC().Format(time.RFC3339))
	out, err := json.Marshal(expand(v, r))
	if err != nil {
		return nil, err
	}
	if len(out) > MaxJobBytes {
		return nil, core.FieldErrorf("create_job.job", "is %d bytes once ${{name}} is replaced by the firing's job name, more than the %d a job may have: write ${{name}} fewer times", len(out), MaxJobBytes)
	}
	return out, nil
}

// MaxJobBytes bounds a firing's job document once its expressions are
// replaced: a request's body is bounded (1 MiB), but ${{name}}
// replaced by a name of up to 214 characters would make a document of
// it many times larger at every firing.
const MaxJobBytes = 1 << 20

func expand(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return r.Replace(x)
	case []any:
		for i := range x {
			x[i] = expand(x[i], r)
		}
	case map[string]any:
		for k := range x {
			x[k] = expand(x[k], r)
		}
	}
	return v
}

// decodeAny decodes JSON keeping numbers as written (a seed past 2^53
// stays exact).
func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

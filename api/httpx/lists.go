package httpx

import (
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// List is the envelope of every list response, as Azure's.
type List[T any] struct {
	Value []T `json:"value"`
}

// OrEmpty is l, or an empty list for nil: a list answers [] rather than
// null, which clients would have to special-case.
func OrEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// ParseSince reads a ?since= value: an RFC 3339 time or a duration back
// from now ("1h").
func ParseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, core.FieldErrorf("since", "%q is neither an RFC 3339 time nor a duration such as 1h", v)
}

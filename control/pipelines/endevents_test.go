package pipelines

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// endKindsOf lists the end events (completed, failed, canceled) in evs,
// oldest first: the notifier reads a job's end from them.
func endKindsOf(evs []*core.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Kind {
		case core.EventJobCompleted, core.EventJobFailed, core.EventJobCanceled:
			out = append(out, e.Kind)
		}
	}
	return out
}

// wantOneEnd fails the test unless evs hold exactly one end event, of
// kind.
func wantOneEnd(t *testing.T, what string, evs []*core.Event, kind string) {
	t.Helper()
	if got := endKindsOf(evs); len(got) != 1 || got[0] != kind {
		t.Errorf("%s: end events %v, want one %q", what, got, kind)
	}
}

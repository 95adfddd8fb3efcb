package runhistory

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// A pipeline's settings that Shoal kept and ignored are among its run's
// warnings (what jobs.stream prints); a pipeline without them has none.
func TestWarningsSayIgnoredSettings(t *testing.T) {
	p := &job.Job{Pipeline: &job.PipelineSpec{Settings: job.PipelineSettings{
		Ignored: map[string]json.RawMessage{"default_datestore": json.RawMessage(`"x"`)}}}}
	w := warnings(p, nil)
	if len(w) != 1 || !strings.Contains(w[0].Message, "settings.default_datestore") || !strings.Contains(w[0].Message, "ignored") {
		t.Fatalf("warnings %+v", w)
	}
	if w := warnings(&job.Job{Pipeline: &job.PipelineSpec{}}, nil); len(w) != 0 {
		t.Errorf("no ignored settings: warnings %+v", w)
	}
	if w := warnings(&job.Job{}, nil); len(w) != 0 {
		t.Errorf("a command job: warnings %+v", w)
	}
}

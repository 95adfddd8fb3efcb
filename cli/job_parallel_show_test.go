package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// `job show -o table` prints a parallel job's progress under its row:
// mini-batches done, failed, retried, in flight and left, the rate and
// the estimated end.
func TestJobShowParallelProgress(t *testing.T) {
	j := &job.Job{JobSpec: job.JobSpec{Name: "pj", Type: "command", Compute: "cpu"}, Status: job.JobRunning,
		ParallelProgress: &job.ParallelProgress{MiniBatches: 100, Items: 1000, Done: 40, Failed: 2, Retried: 5, InFlight: 8, Left: 58,
			FailedItems: 3, PerMinute: 12.5, ETA: "2026-01-02T03:09:45Z"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(j)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SHOAL_SERVER", srv.URL)
	got := output(t, "job", "show", "-n", "pj", "-o", "table")
	lines := strings.Split(strings.TrimSpace(got), "\n")
	var header, row string
	for i, l := range lines {
		if strings.Contains(l, "In Flight") {
			header, row = l, lines[min(i+2, len(lines)-1)]
		}
	}
	if header == "" {
		t.Fatalf("no progress table:\n%s", got)
	}
	if f := strings.Fields(row); len(f) < 9 || f[0] != "100" || f[1] != "40" || f[2] != "2" || f[3] != "5" || f[4] != "8" || f[5] != "58" ||
		f[6] != "3" || f[7] != "12.5" || f[8] != "2026-01-02T03:09:45Z" {
		t.Errorf("progress row %q under %q:\n%s", row, header, got)
	}
}

package sim

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// The golden replay agrees with testdata/reference.py, a replay written
// from the flowchart alone (no Shoal code), on node-hours, jobs that
// waited and mean wait for every idle timeout.
func TestReferenceReplay(t *testing.T) {
	testenv.Command(t, "python3", "python3 (the reference scheduler)", "apt-get install python3")
	out, err := exec.Command("python3", "testdata/reference.py", "testdata/alibaba-gpu-2023/openb_pod_list_default.csv").Output()
	if err != nil {
		t.Fatalf("reference.py: %v", err)
	}
	jobs := loadTrace(t)
	var want strings.Builder
	for _, idle := range goldenPolicies {
		r, err := Run(jobs, Config{IdleTimeBeforeScaleDown: idle, ProvisionDelay: 180 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&want, "%d %.6f %d %.3f\n", int(idle.Seconds()), r.NodeHours, r.Waited, r.WaitMean)
	}
	if string(out) != want.String() {
		t.Errorf("the reference replay says\n%s\nShoal's replay says\n%s", out, want.String())
	}
}

package computes

import (
	"encoding/json"
	"fmt"

	"github.com/shoal-ml/shoal/decide/scalewindow"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// checkScaleWindows refuses scale windows on anything but a compute
// cluster, and windows that do not compile (a bad trigger, min > max,
// a negative bound, a duplicate name), naming the field. The read-only
// state is never taken from a request.
func checkScaleWindows(spec *compute.ComputeSpec) error {
	spec.ScaleWindow = nil
	if len(spec.ScaleWindows) == 0 {
		spec.ScaleWindows = nil
		return nil
	}
	if spec.Type != compute.ComputeTypeCluster {
		return core.FieldErrorf("scale_windows", "belongs to compute clusters (type amlcompute), not to a %s", spec.Type)
	}
	_, err := scalewindow.Compile(spec.ScaleWindows)
	return err
}

// scaleWindowsChange describes a change of a cluster's windows for its
// updated event, or "" when they are the same.
func scaleWindowsChange(old, new []*dschedule.ScaleWindow) string {
	a, _ := json.Marshal(old)
	b, _ := json.Marshal(new)
	if string(a) == string(b) {
		return ""
	}
	return fmt.Sprintf("scale_windows: %d→%d window(s)", len(old), len(new))
}

// withScaleWindow sets out's read-only scale_window to its bounds at the
// service clock's now: the window in force and the next change.
func (s *Service) withScaleWindow(out *compute.Compute) {
	out.ScaleWindow = nil
	if s.cfg.Clock == nil {
		return
	}
	if b, ok := scalewindow.Of(out, s.cfg.Clock.Now()); ok {
		out.ScaleWindow = b.State()
	}
}

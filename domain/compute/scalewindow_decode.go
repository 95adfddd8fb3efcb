package compute

import (
	"encoding/json"
	"fmt"
)

// normalizeScaleWindows checks the bounds of each scale window as whole
// numbers, naming the window ("scale_windows[1].max_instances: must be a
// whole number, got 2.5"), and writes 2.0 as 2 for the strict decode. The
// windows' other rules (triggers, min ≤ max) are decide/scalewindow's.
func normalizeScaleWindows(obj map[string]json.RawMessage) error {
	raw := NonNull(obj["scale_windows"])
	if raw == nil {
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil // CheckKeys named the shape already
	}
	for i, it := range items {
		for _, k := range []string{"min_instances", "max_instances"} {
			v, ok := it[k]
			if !ok {
				continue
			}
			n, err := CheckInteger(fmt.Sprintf("scale_windows[%d].%s", i, k), v)
			if err != nil {
				return err
			}
			if n == nil {
				delete(it, k)
			} else {
				it[k], _ = json.Marshal(*n)
			}
		}
	}
	obj["scale_windows"], _ = json.Marshal(items)
	return nil
}

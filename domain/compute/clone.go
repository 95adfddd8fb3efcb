package compute

import (
	"encoding/json"
	"fmt"
)

// Clone returns a deep copy of s: nothing of it shares memory with s. A
// service that changes a spec as it stores it (normalising it, sealing
// its password) starts each run of its transaction from a clone, since a
// store may run a transaction again (store.Store.Update) and the second
// run must see the request, not the first run's changes. It fails only
// for a value JSON cannot carry (a NaN).
func (s *ComputeSpec) Clone() (*ComputeSpec, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("copy the compute's definition: %w", err)
	}
	out := &ComputeSpec{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("copy the compute's definition: %w", err)
	}
	// The fields JSON leaves out.
	out.KeepScaleWindows = s.KeepScaleWindows
	return out, nil
}

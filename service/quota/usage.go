package quota

import (
	"context"
	"fmt"
	"sort"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// heldVCPUs is the vCPUs allocated at a location: dedicated per family
// and in total, and low-priority in total.
type heldVCPUs struct {
	DedicatedByFamily map[string]int
	Dedicated         int
	LowPriority       int
}

// ListUsages returns the quota usage of a location (by name or alias):
// total, dedicated and low-priority vCPUs, then each VM family.
func (q *Quotas) ListUsages(ctx context.Context, location string) ([]catalog.Usage, error) {
	loc, err := q.cfg.Catalog.Location(location)
	if err != nil {
		return nil, err
	}
	var used heldVCPUs
	err = q.cfg.Store.View(ctx, func(tx store.Tx) error {
		used, err = q.vcpuUsage(tx, loc)
		return err
	})
	if err != nil {
		return nil, err
	}
	lq := loc.Quota
	base := fmt.Sprintf("/subscriptions/%s/providers/Microsoft.MachineLearningServices/locations/%s/usages/", q.cfg.Subscription, loc.Name)
	line := func(kind, value, localized string, current, limit int) catalog.Usage {
		return catalog.Usage{
			ID: base + value, AmlWorkspaceLocation: loc.Name,
			Type: "Microsoft.MachineLearningServices/" + kind + "/usages", Unit: "Count",
			CurrentValue: current, Limit: limit,
			Name: catalog.UsageName{Value: value, LocalizedValue: localized},
		}
	}
	out := []catalog.Usage{
		line("totalCores", "TotalCores", "Total Regional vCPUs", used.Dedicated+used.LowPriority, sumLimit(lq.TotalDedicatedVCPUs, lq.LowPriorityVCPUs)),
		line("dedicatedCores", "DedicatedCores", "Total Regional Dedicated vCPUs", used.Dedicated, lq.TotalDedicatedVCPUs),
		line("lowPriorityCores", "LowPriorityCores", "Total Regional Low-priority vCPUs", used.LowPriority, lq.LowPriorityVCPUs),
	}
	for _, f := range q.familiesAt(loc) {
		out = append(out, line("vmFamily", f, familyDisplayName(f)+" vCPUs", used.DedicatedByFamily[f], lq.FamilyLimit(f)))
	}
	return out, nil
}

// vcpuUsage counts the vCPUs of the nodes allocated at loc (every node that
// exists holds its quota until it is released) and of the stopped
// instances that keep theirs.
func (q *Quotas) vcpuUsage(tx store.Tx, loc *catalog.Location) (heldVCPUs, error) {
	u := heldVCPUs{DedicatedByFamily: map[string]int{}}
	nodes, err := tx.ListNodes(node.NodeFilter{Location: loc.Name})
	if err != nil {
		return u, err
	}
	for _, n := range nodes {
		if n.LowPriority {
			u.LowPriority += n.VCPUs
		} else {
			u.Dedicated += n.VCPUs
			u.DedicatedByFamily[n.Family] += n.VCPUs
		}
	}
	if err := q.reservedInstanceVCPUs(tx, loc, &u); err != nil {
		return u, err
	}
	return u, nil
}

// familiesAt returns the VM families of a location's sizes, sorted.
func (q *Quotas) familiesAt(loc *catalog.Location) []string {
	seen := map[string]bool{}
	var out []string
	for _, sz := range q.cfg.Catalog.SizesAt(loc) {
		if !seen[sz.Family] {
			seen[sz.Family] = true
			out = append(out, sz.Family)
		}
	}
	sort.Strings(out)
	return out
}

// sumLimit adds two limits, either of which may be -1 (none).
func sumLimit(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// familyDisplayName turns "standardDSv2Family" into "Standard DSv2 Family".
func familyDisplayName(f string) string {
	out := []rune{}
	for i, r := range f {
		if i == 0 && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		if i > 0 && (f[i:] == "Family" || (f[:i] == "standard")) {
			out = append(out, ' ')
		}
		out = append(out, r)
	}
	return string(out)
}

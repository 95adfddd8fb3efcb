package service

import (
	"context"
	"fmt"
	"sort"

	"github.com/shoal-ml/shoal"
)

// Usage is one quota line of a location; see shoal.Usage.
type Usage = shoal.Usage

// UsageName names a usage line; see shoal.UsageName.
type UsageName = shoal.UsageName

// VCPUUsage is the vCPUs allocated at a location: dedicated per family and
// in total, and low-priority in total.
type VCPUUsage struct {
	DedicatedByFamily map[string]int
	Dedicated         int
	LowPriority       int
}

// ListUsages returns the quota usage of a location (by name or alias):
// total, dedicated and low-priority vCPUs, then each VM family.
func (s *Services) ListUsages(ctx context.Context, location string) ([]Usage, error) {
	loc, err := s.catalog.Location(location)
	if err != nil {
		return nil, err
	}
	var used VCPUUsage
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		used, err = s.vcpuUsage(tx, loc)
		return err
	})
	if err != nil {
		return nil, err
	}
	q := loc.Quota
	base := fmt.Sprintf("/subscriptions/%s/providers/Microsoft.MachineLearningServices/locations/%s/usages/", shoal.Subscription, loc.Name)
	line := func(kind, value, localized string, current, limit int) Usage {
		return Usage{
			ID: base + value, AmlWorkspaceLocation: loc.Name,
			Type: "Microsoft.MachineLearningServices/" + kind + "/usages", Unit: "Count",
			CurrentValue: current, Limit: limit,
			Name: UsageName{Value: value, LocalizedValue: localized},
		}
	}
	out := []Usage{
		line("totalCores", "TotalCores", "Total Regional vCPUs", used.Dedicated+used.LowPriority, sumLimit(q.TotalDedicatedVCPUs, q.LowPriorityVCPUs)),
		line("dedicatedCores", "DedicatedCores", "Total Regional Dedicated vCPUs", used.Dedicated, q.TotalDedicatedVCPUs),
		line("lowPriorityCores", "LowPriorityCores", "Total Regional Low-priority vCPUs", used.LowPriority, q.LowPriorityVCPUs),
	}
	families := map[string]bool{}
	for _, sz := range s.catalog.SizesAt(loc) {
		families[sz.Family] = true
	}
	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		out = append(out, line("vmFamily", f, familyDisplayName(f)+" vCPUs", used.DedicatedByFamily[f], q.FamilyLimit(f)))
	}
	return out, nil
}

// vcpuUsage counts the vCPUs of the nodes allocated at loc (every node that
// exists holds its quota until it is released) and of the stopped
// instances that keep theirs.
func (s *Services) vcpuUsage(tx shoal.Tx, loc *shoal.Location) (VCPUUsage, error) {
	u := VCPUUsage{DedicatedByFamily: map[string]int{}}
	nodes, err := tx.ListNodes(shoal.NodeFilter{Location: loc.Name})
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
	if err := s.reservedInstanceVCPUs(tx, loc, &u); err != nil {
		return u, err
	}
	return u, nil
}

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

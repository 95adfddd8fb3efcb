package service

import (
	"fmt"

	"github.com/shoal-ml/shoal"
)

// Instances share their location's quota with clusters. A running
// instance holds it through its node; a stopped one keeps holding it, so
// that it can start again, unless it was created with
// release_quota_on_stop (Azure's rule).

// instanceHoldsQuotaStopped reports whether c, an instance without a node,
// still holds its quota.
func instanceHoldsQuotaStopped(c *shoal.Compute) bool {
	if c.Instance == nil || c.ReleaseQuotaOnStop == nil || *c.ReleaseQuotaOnStop {
		return false
	}
	return c.ProvisioningState != shoal.ProvisioningDeleting
}

// reservedInstanceVCPUs adds to u the vCPUs of loc's instances that have
// no node but hold their quota (stopped, or starting before their node
// exists).
func (s *Services) reservedInstanceVCPUs(tx shoal.Tx, loc *shoal.Location, u *VCPUUsage) error {
	list, err := s.instancesWithoutNode(tx, loc)
	if err != nil {
		return err
	}
	for _, c := range list {
		size, ok := s.catalog.Size(c.Size)
		if !ok {
			continue
		}
		u.Dedicated += size.VCPUs
		u.DedicatedByFamily[size.Family] += size.VCPUs
	}
	return nil
}

// instancesWithoutNode lists the instances at loc that hold quota but have
// no node.
func (s *Services) instancesWithoutNode(tx shoal.Tx, loc *shoal.Location) ([]*shoal.Compute, error) {
	wss, err := tx.ListWorkspaces()
	if err != nil {
		return nil, err
	}
	nodes, err := tx.ListNodes(shoal.NodeFilter{Location: loc.Name})
	if err != nil {
		return nil, err
	}
	hasNode := map[string]bool{}
	for _, n := range nodes {
		if n.Role == shoal.NodeRoleInstance {
			hasNode[shoal.ComputeKey(n.Workspace, n.Compute)] = true
		}
	}
	var out []*shoal.Compute
	for _, w := range wss {
		list, err := tx.ListComputes(shoal.ComputeFilter{Workspace: w.Name, Type: shoal.ComputeTypeInstance})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			l, err := s.catalog.Location(c.Location)
			if err != nil || l.Name != loc.Name || hasNode[shoal.ComputeKey(c.Workspace, c.Name)] {
				continue
			}
			if instanceHoldsQuotaStopped(c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// CheckInstanceQuota fails with EQUOTA when starting c (which holds no
// quota now) would exceed its location's quota.
func (s *Services) CheckInstanceQuota(tx shoal.Tx, c *shoal.Compute) error {
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		return err
	}
	size, ok := s.catalog.Size(c.Size)
	if !ok {
		return shoal.Errorf(shoal.EINVALID, "size %s is no longer in the catalog", c.Size)
	}
	used, err := s.vcpuUsage(tx, loc)
	if err != nil {
		return err
	}
	q := loc.Quota
	need := size.VCPUs
	if lim := q.FamilyLimit(size.Family); lim >= 0 && used.DedicatedByFamily[size.Family]+need > lim {
		return shoal.Errorf(shoal.EQUOTA, "cannot start compute instance %q: dedicated quota for %s in %s would be %d/%d vCPUs; delete another instance, scale a cluster down or raise the quota (a stopped instance keeps its quota unless release_quota_on_stop)",
			c.Name, size.Family, loc.Name, used.DedicatedByFamily[size.Family]+need, lim)
	}
	if lim := q.TotalDedicatedVCPUs; lim >= 0 && used.Dedicated+need > lim {
		return shoal.Errorf(shoal.EQUOTA, "cannot start compute instance %q: total dedicated quota in %s would be %d/%d vCPUs; delete another instance, scale a cluster down or raise the quota (a stopped instance keeps its quota unless release_quota_on_stop)", c.Name, loc.Name, used.Dedicated+need, lim)
	}
	return s.checkWorkspaceQuota(tx, c.Workspace, size.Family, need, fmt.Sprintf("cannot start compute instance %q", c.Name))
}

package quota

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Instances share their location's quota with clusters. A running
// instance holds it through its node; a stopped one keeps holding it, so
// that it can start again, unless it was created with
// release_quota_on_stop (Azure's rule).

// HoldsStopped reports whether c, an instance without a node, still
// holds its quota.
func HoldsStopped(c *compute.Compute) bool {
	if c.Instance == nil || c.ReleaseQuotaOnStop == nil || *c.ReleaseQuotaOnStop {
		return false
	}
	return c.ProvisioningState != compute.ProvisioningDeleting
}

// reservedInstanceVCPUs adds to u the vCPUs of loc's instances that have
// no node but hold their quota (stopped, or starting before their node
// exists).
func (q *Quotas) reservedInstanceVCPUs(tx store.Tx, loc *catalog.Location, u *heldVCPUs) error {
	list, err := q.instancesWithoutNode(tx, loc.Name, func(c *compute.Compute) bool {
		l, err := q.cfg.Catalog.Location(c.Location)
		return err == nil && l.Name == loc.Name
	})
	if err != nil {
		return err
	}
	for _, c := range list {
		size, ok := q.cfg.Catalog.Size(c.Size)
		if !ok {
			continue
		}
		u.Dedicated += size.VCPUs
		u.DedicatedByFamily[size.Family] += size.VCPUs
	}
	return nil
}

// instancesWithoutNode lists the instances that keep accepts which hold
// quota but have no node at location ("" for every location).
func (q *Quotas) instancesWithoutNode(tx store.Tx, location string, keep func(*compute.Compute) bool) ([]*compute.Compute, error) {
	wss, err := tx.ListWorkspaces()
	if err != nil {
		return nil, err
	}
	nodes, err := tx.ListNodes(node.NodeFilter{Location: location})
	if err != nil {
		return nil, err
	}
	hasNode := map[string]bool{}
	for _, n := range nodes {
		if n.Role == node.NodeRoleInstance {
			hasNode[compute.ComputeKey(n.Workspace, n.Compute)] = true
		}
	}
	var out []*compute.Compute
	for _, w := range wss {
		list, err := tx.ListComputes(compute.ComputeFilter{Workspace: w.Name, Type: compute.ComputeTypeInstance})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			if keep(c) && !hasNode[compute.ComputeKey(c.Workspace, c.Name)] && HoldsStopped(c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// CheckInstanceQuota fails with EQUOTA when starting c (which holds no
// quota now) would exceed its location's quota or its workspace's.
func (q *Quotas) CheckInstanceQuota(tx store.Tx, c *compute.Compute) error {
	loc, err := q.cfg.Catalog.Location(c.Location)
	if err != nil {
		return err
	}
	size, ok := q.cfg.Catalog.Size(c.Size)
	if !ok {
		return core.Errorf(core.EINVALID, "size %s is no longer in the catalog", c.Size)
	}
	used, err := q.vcpuUsage(tx, loc)
	if err != nil {
		return err
	}
	lq := loc.Quota
	need := size.VCPUs
	if lim := lq.FamilyLimit(size.Family); lim >= 0 && used.DedicatedByFamily[size.Family]+need > lim {
		return core.Errorf(core.EQUOTA, "cannot start compute instance %q: dedicated quota for %s in %s would be %d/%d vCPUs; delete another instance, scale a cluster down or raise the quota (a stopped instance keeps its quota unless release_quota_on_stop)",
			c.Name, size.Family, loc.Name, used.DedicatedByFamily[size.Family]+need, lim)
	}
	if lim := lq.TotalDedicatedVCPUs; lim >= 0 && used.Dedicated+need > lim {
		return core.Errorf(core.EQUOTA, "cannot start compute instance %q: total dedicated quota in %s would be %d/%d vCPUs; delete another instance, scale a cluster down or raise the quota (a stopped instance keeps its quota unless release_quota_on_stop)", c.Name, loc.Name, used.Dedicated+need, lim)
	}
	return q.checkWorkspaceQuota(tx, c.Workspace, size.Family, need, fmt.Sprintf("cannot start compute instance %q", c.Name))
}

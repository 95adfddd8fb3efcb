package autoscaler

// Only returns the snapshot with only the clusters whose keys are in keys
// left to plan: every other cluster's nodes become Reserved quota, held
// as newQuotaBook counts them. A pass for one compute's new job plans
// that compute alone, against the quota the others hold, and decides for
// it as a pass over every cluster would (clusters planned before it in
// such a pass may take headroom first; their own pass sees the result).
// The snapshot is not modified.
func (s Snapshot) Only(keys map[string]bool) Snapshot {
	out := s
	out.Clusters = nil
	out.Reserved = append([]Reservation(nil), s.Reserved...)
	for _, c := range s.Clusters {
		if keys[c.Key] {
			out.Clusters = append(out.Clusters, c)
			continue
		}
		held, dedicated := 0, 0
		for _, n := range c.Nodes {
			switch n.State {
			case NodePreparing, NodeIdle, NodeRunning, NodeLeaving:
				if n.Dedicated && c.LowPriority {
					dedicated++
				} else {
					held++
				}
			}
		}
		v := max(c.VCPUsPerNode, 0)
		if held > 0 && v > 0 {
			out.Reserved = append(out.Reserved, Reservation{Location: c.Location, Workspace: c.Workspace, Family: c.Family, LowPriority: c.LowPriority, VCPUs: held * v})
		}
		if dedicated > 0 && v > 0 {
			out.Reserved = append(out.Reserved, Reservation{Location: c.Location, Workspace: c.Workspace, Family: c.Family, VCPUs: dedicated * v})
		}
	}
	return out
}

package node

import "time"

// NodeUsage is one node's life in the usage ledger: from its creation
// (the start of provisioning) to its deletion (ReleasedOn nil while it
// lives). The cost report prices it by size and tier.
type NodeUsage struct {
	NodeID      string     `json:"node_id"`
	Workspace   string     `json:"workspace"`
	Compute     string     `json:"compute"`
	Size        string     `json:"size"`
	LowPriority bool       `json:"low_priority"`
	CreatedOn   time.Time  `json:"created_on"`
	ReleasedOn  *time.Time `json:"released_on,omitempty"`
}

// Overlap returns how long the node lived within [since, until).
func (u *NodeUsage) Overlap(since, until time.Time) time.Duration {
	start, end := u.CreatedOn, until
	if u.ReleasedOn != nil && u.ReleasedOn.Before(end) {
		end = *u.ReleasedOn
	}
	if start.Before(since) {
		start = since
	}
	if end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

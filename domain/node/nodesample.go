package node

import "time"

// NodeSample is how many of a compute's nodes were in each state from
// Time until the next sample: the history the studio charts and prices
// (node-hours × the size's price on the compute's tier). The controller
// writes one when the counts change, and at least every
// NodeSampleInterval while a compute has nodes.
type NodeSample struct {
	Workspace string    `json:"workspace"`
	Compute   string    `json:"compute"`
	Time      time.Time `json:"time"`
	Size      string    `json:"size"`
	Tier      string    `json:"tier"`
	Preparing int       `json:"preparing"`
	Idle      int       `json:"idle"`
	Running   int       `json:"running"`
	Leaving   int       `json:"leaving"`
	Unusable  int       `json:"unusable"`
	Preempted int       `json:"preempted"`
}

// NodeSampleInterval bounds the time between two samples of a compute
// with nodes, so that a chart's last point is never far behind.
const NodeSampleInterval = 5 * time.Minute

// NodeSampleRetention is how long samples are kept.
const NodeSampleRetention = 31 * 24 * time.Hour

// Billed returns the nodes that cost money: every node that holds a
// machine (a preempted one no longer does).
func (s *NodeSample) Billed() int {
	return s.Preparing + s.Idle + s.Running + s.Leaving + s.Unusable
}

// SameCounts reports whether two samples count the same nodes in each
// state (and the same size and tier).
func (s *NodeSample) SameCounts(o *NodeSample) bool {
	return o != nil && s.Size == o.Size && s.Tier == o.Tier && s.Preparing == o.Preparing && s.Idle == o.Idle &&
		s.Running == o.Running && s.Leaving == o.Leaving && s.Unusable == o.Unusable && s.Preempted == o.Preempted
}

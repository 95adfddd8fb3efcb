package node

import "time"

// InstanceLive is the live state of a compute instance: what its node's
// agent reported last and when the server's application proxy last
// carried a request to it. Agents sync with whichever server replica they
// reach, and any replica may serve the proxy, while the leader's
// controllers decide from it: so it is stored, where every replica reads
// the same.
type InstanceLive struct {
	Workspace string
	Compute   string
	// Node is the node whose agent made Report; "" when it was forgotten
	// (the node was released).
	Node string
	// Report is the agent's last report written, nil when forgotten.
	// Its SSHLogins are not kept (they go to the audit log).
	Report *InstanceReport
	// ReportedAt is when Report was made (or forgotten). A report older
	// than the stored one does not replace it.
	ReportedAt time.Time
	// ProxyLastRequest is the latest request through the application
	// proxy to the instance; zero when none.
	ProxyLastRequest time.Time
}

package studio

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// A node's connection string is the cluster's admin user at the node's
// address — public when it has one — and SSH port, only on a cluster
// created with SSH access, for a node whose SSH server is up.
func TestNodeSSH(t *testing.T) {
	on, off := true, false
	withSSH := &compute.Compute{ComputeSpec: compute.ComputeSpec{SSHPublicAccessEnabled: &on, SSHSettings: &compute.SSHSettings{AdminUsername: "ops"}}}
	for _, tc := range []struct {
		what string
		c    *compute.Compute
		n    *node.Node
		want string
	}{
		{"SSH on", withSSH, &node.Node{PrivateIPAddress: "10.0.0.5", SSHPort: 2222}, "ssh ops@10.0.0.5 -p 2222"},
		{"a public address", withSSH, &node.Node{PrivateIPAddress: "10.0.0.5", PublicIPAddress: "203.0.113.7", SSHPort: 2222}, "ssh ops@203.0.113.7 -p 2222"},
		{"a node not joined yet", withSSH, &node.Node{State: node.NodePreparing}, ""},
		{"its SSH server not up yet", withSSH, &node.Node{PrivateIPAddress: "10.0.0.5", Port: 40000}, ""},
		{"SSH off", &compute.Compute{ComputeSpec: compute.ComputeSpec{SSHPublicAccessEnabled: &off}}, &node.Node{PrivateIPAddress: "10.0.0.5", SSHPort: 2222}, ""},
		{"SSH unset", &compute.Compute{}, &node.Node{PrivateIPAddress: "10.0.0.5", SSHPort: 2222}, ""},
	} {
		if got := nodeSSH(tc.c, tc.n); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.want)
		}
	}
}

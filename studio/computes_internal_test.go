package studio

import (
	"testing"

	"github.com/shoal-ml/shoal"
)

// A node's connection string is the cluster's admin user at the node's
// address and port — public when it has one — and only on a cluster
// created with SSH access, for a node that has an address.
func TestNodeSSH(t *testing.T) {
	on, off := true, false
	withSSH := &shoal.Compute{ComputeSpec: shoal.ComputeSpec{SSHPublicAccessEnabled: &on, SSHSettings: &shoal.SSHSettings{AdminUsername: "ops"}}}
	for _, tc := range []struct {
		what string
		c    *shoal.Compute
		n    *shoal.Node
		want string
	}{
		{"SSH on", withSSH, &shoal.Node{PrivateIPAddress: "10.0.0.5", Port: 2222}, "ssh ops@10.0.0.5 -p 2222"},
		{"a public address", withSSH, &shoal.Node{PrivateIPAddress: "10.0.0.5", PublicIPAddress: "203.0.113.7", Port: 2222}, "ssh ops@203.0.113.7 -p 2222"},
		{"a node not joined yet", withSSH, &shoal.Node{State: shoal.NodePreparing}, ""},
		{"SSH off", &shoal.Compute{ComputeSpec: shoal.ComputeSpec{SSHPublicAccessEnabled: &off}}, &shoal.Node{PrivateIPAddress: "10.0.0.5", Port: 2222}, ""},
		{"SSH unset", &shoal.Compute{}, &shoal.Node{PrivateIPAddress: "10.0.0.5", Port: 2222}, ""},
	} {
		if got := nodeSSH(tc.c, tc.n); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.want)
		}
	}
}

package compute_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// TestNoPublicIPNeedsASubnet: a compute without a public IP must be in a
// subnet, as on Azure; without one it would reach what any node reaches
// (the host's network) while its owner believes it has no way out.
func TestNoPublicIPNeedsASubnet(t *testing.T) {
	cat := defaultCatalog(t)
	for _, tc := range []struct{ name, doc, refused string }{
		{name: "instance without subnet", doc: `{"name": "ci-one", "type": "computeinstance", "enable_node_public_ip": false}`, refused: "enable_node_public_ip"},
		{name: "instance with a vnet but no subnet", doc: `{"name": "ci-one", "type": "computeinstance", "network_settings": {"vnet_name": "ml-vnet"}, "enable_node_public_ip": false}`, refused: "enable_node_public_ip"},
		{name: "instance in a subnet", doc: `{"name": "ci-one", "type": "computeinstance", "network_settings": {"vnet_name": "ml-vnet", "subnet": "a"}, "enable_node_public_ip": false}`},
		{name: "instance with a public IP", doc: `{"name": "ci-one", "type": "computeinstance", "enable_node_public_ip": true}`},
		{name: "cluster without subnet", doc: `{"name": "cpu", "type": "amlcompute", "enable_node_public_ip": false}`, refused: "enable_node_public_ip"},
		{name: "cluster in a subnet", doc: `{"name": "cpu", "type": "amlcompute", "network_settings": {"vnet_name": "ml-vnet", "subnet": "a"}, "enable_node_public_ip": false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := compute.DecodeComputeSpec([]byte(tc.doc))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, _, err = compute.NormalizeComputeSpec(spec, cat, "local")
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "subnet") {
				t.Fatalf("got %v, want an invalid %s naming the subnet", err, tc.refused)
			}
		})
	}
}

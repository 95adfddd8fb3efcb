package arm

import (
	"net/http"

	"github.com/shoal-ml/shoal/arm/armcompute"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
)

// resource is c as ARM shows it to request r, with its instance type
// when it is an attached Kubernetes compute.
func (h Handlers) resource(r *http.Request, c *compute.Compute) *armcompute.Resource {
	var it *catalog.InstanceType
	if c.Type == compute.ComputeTypeKubernetes {
		if loc, err := h.Svc.Catalog().Location(c.Location); err == nil {
			it, _ = loc.Kubernetes.InstanceType(c.InstanceType)
		}
	}
	return armcompute.ToResourceWith(scopeOf(r), c.Redacted(), it)
}

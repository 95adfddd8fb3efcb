package service

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal"
)

// InstanceNodeID is the ID of an instance's own node. It is stable, so
// the node's work dir — the instance's home — survives stop and start.
func InstanceNodeID(c *shoal.Compute, loc *shoal.Location) string {
	return fmt.Sprintf("ci-%s-%s", strings.ToLower(loc.Name), strings.ToLower(c.Name))
}

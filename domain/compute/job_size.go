package compute

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// CheckJobSize checks a job's resources.instance_type against a cluster
// or an instance, whose nodes are all of its VM size: empty or that size
// (any case) is accepted; anything else is an EINVALID error naming the
// field, the compute's size and, where GPUs differ, what each has, since
// a job that asked for GPUs would otherwise run on a node without them.
func CheckJobSize(cat *catalog.Catalog, c *Compute, want string) error {
	want = strings.TrimSpace(want)
	if want == "" || strings.EqualFold(want, c.Size) {
		return nil
	}
	have := c.Size
	if sz, ok := cat.Size(c.Size); ok {
		have = c.Size + " (" + gpuPhrase(sz) + ")"
	}
	asked := fmt.Sprintf("%q is not a VM size of this server%s", want, didYouMeanSize(cat, c, want))
	if sz, ok := cat.Size(want); ok {
		asked = fmt.Sprintf("%s has %s", sz.Name, gpuPhrase(sz))
	}
	return core.FieldErrorf("resources.instance_type", "%s, but every node of compute %s is %s; omit resources.instance_type to run on the compute's nodes, or submit to a compute of size %s",
		asked, c.Name, have, want)
}

// gpuPhrase says how many GPUs of which model a size has.
func gpuPhrase(s *catalog.Size) string {
	switch {
	case s.GPUs == 0:
		return "no GPU"
	case s.GPUs == 1:
		return "1 " + s.GPUModel + " GPU"
	}
	return fmt.Sprintf("%d %s GPUs", s.GPUs, s.GPUModel)
}

// didYouMeanSize suggests a size of the compute's location near want.
func didYouMeanSize(cat *catalog.Catalog, c *Compute, want string) string {
	loc, err := cat.Location(c.Location)
	if err != nil {
		return ""
	}
	return core.DidYouMean(want, cat.SizeNamesAt(loc))
}

package service

import (
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// checkInstanceType checks a job's resources.instance_type against its
// compute. On a kubernetes compute: one of the location's instance types,
// and the compute's (its nodes are all of one). On a cluster or an
// instance: the compute's VM size, since every node of it is of that size
// and a job asking another (a GPU size on a CPU cluster) would run
// without what it asked for. A serverless pool was chosen by the key and
// is not checked again.
func (s *Services) checkInstanceType(c *compute.Compute, spec *job.JobSpec) error {
	if c.Serverless {
		return nil
	}
	if c.Type != compute.ComputeTypeKubernetes {
		if spec.Resources == nil {
			return nil
		}
		return compute.CheckJobSize(s.catalog, c, spec.Resources.InstanceType)
	}
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		return err
	}
	if loc.Kubernetes == nil {
		return core.Errorf(core.ECONFLICT, "compute %q: location %q is no longer a kubernetes location", c.Name, loc.Name)
	}
	want := ""
	if spec.Resources != nil {
		want = spec.Resources.InstanceType
	}
	it, err := compute.JobInstanceType(c, loc, want)
	if err != nil {
		return err
	}
	if spec.Resources != nil && want != "" {
		spec.Resources.InstanceType = it.Name
	}
	return nil
}

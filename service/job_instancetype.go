package service

import (
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// checkInstanceType checks a job's resources.instance_type against its
// kubernetes compute: one of the location's instance types, and the
// compute's (its nodes are all of one). On other computes the key keeps
// its meaning elsewhere (serverless sizes) and is not checked here.
func (s *Services) checkInstanceType(c *compute.Compute, spec *job.JobSpec) error {
	if c.Type != compute.ComputeTypeKubernetes {
		return nil
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

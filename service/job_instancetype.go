package service

import (
	"github.com/shoal-ml/shoal"
)

// checkInstanceType checks a job's resources.instance_type against its
// kubernetes compute: one of the location's instance types, and the
// compute's (its nodes are all of one). On other computes the key keeps
// its meaning elsewhere (serverless sizes) and is not checked here.
func (s *Services) checkInstanceType(c *shoal.Compute, spec *shoal.JobSpec) error {
	if c.Type != shoal.ComputeTypeKubernetes {
		return nil
	}
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		return err
	}
	if loc.Kubernetes == nil {
		return shoal.Errorf(shoal.ECONFLICT, "compute %q: location %q is no longer a kubernetes location", c.Name, loc.Name)
	}
	want := ""
	if spec.Resources != nil {
		want = spec.Resources.InstanceType
	}
	it, err := shoal.JobInstanceType(c, loc, want)
	if err != nil {
		return err
	}
	if spec.Resources != nil && want != "" {
		spec.Resources.InstanceType = it.Name
	}
	return nil
}

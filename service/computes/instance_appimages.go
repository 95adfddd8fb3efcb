package computes

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/store"
)

// appImageTask adds to t what the instance's agent needs for the
// applications that run from images and for the instance's own image:
// the logins of the workspace's registries those images come from (as a
// job's container task gets them, and no other), and the host paths the
// location lets them mount.
func (s *Service) appImageTask(tx store.Tx, c *compute.Compute, t *node.InstanceTask) error {
	var images []string
	if c.Image != "" {
		images = append(images, c.Image)
	}
	for _, a := range c.CustomApplications {
		if a.Image != nil && a.Image.Reference != "" {
			images = append(images, a.Image.Reference)
		}
	}
	if len(images) == 0 {
		return nil
	}
	creds, err := registries.ForImages(tx, s.cfg.SecretsKey, c.Workspace, images...)
	if err != nil {
		return err
	}
	t.AppRegistries = creds
	if loc, err := s.catalog.Location(c.Location); err == nil {
		t.AppBindMountsAllowed = loc.AppBindMountsAllowed
	}
	return nil
}

// checkAppRuntime refuses, at create, an instance whose applications run
// from images at a location none of whose hosts has a usable container
// runtime (as far as they reported: a location whose hosts have not
// reported may well have one), naming the field: never run an
// application some other way than asked, nor skip it.
func checkAppRuntime(tx store.Tx, spec *compute.ComputeSpec, loc *catalog.Location) error {
	first := -1
	for i, a := range spec.CustomApplications {
		if a.Image != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	why, err := node.WhyNoRuntime(tx, loc.Name)
	if err != nil || why == "" {
		return err
	}
	return core.FieldErrorf(fmt.Sprintf("custom_applications[%d].image", first),
		"the application runs from the image %q, but no host of location %q has a usable container runtime (%s); install podman or Docker on the hosts, or give a command that starts the application on the host instead",
		spec.CustomApplications[first].Image.Reference, loc.Name, why)
}

package service

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/store"
)

// checkContainers applies the location's container mode and what its
// hosts reported of their container engines to a job about to be
// submitted to compute c with the resolved environment env: a job the
// location could never run is refused now, with why, rather than failing
// on a node later.
func (s *Services) checkContainers(tx store.Tx, c *compute.Compute, env *asset.EnvironmentSpec) error {
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		// A compute of a location the config no longer has is refused
		// elsewhere; its mode is the default.
		loc = &catalog.Location{Name: c.Location}
	}
	container := env != nil && (env.Image != "" || env.Build != nil)
	switch loc.ContainerMode() {
	case catalog.ContainersOff:
		if container {
			return core.FieldErrorf("environment", "compute %q is at location %q, which runs no containers (containers: off in the server config): a job with an image or a build cannot run there; leave environment: out to run on the host, or use a compute at a location that runs containers", c.Name, loc.Name)
		}
		return nil
	case catalog.ContainersRequired:
		if !container {
			return core.FieldErrorf("environment", "compute %q is at location %q, which runs every job in a container (containers: required in the server config): name an environment with an image (environment: {image: <image>}, or azureml:<name>@latest; see `shoal environment list`)", c.Name, loc.Name)
		}
	}
	if !container {
		return nil
	}
	why, err := node.WhyNoRuntime(tx, loc.Name)
	if err != nil || why == "" {
		return err
	}
	return core.FieldErrorf("environment", "the job runs in a container (image %s) but no host of location %q has a usable container runtime: %s; install podman or Docker on the hosts (the node's agent looks when it joins), or leave environment: out to run on the host",
		envImage(env), loc.Name, why)
}

// envImage names an environment's image for people: the image, or the
// build it comes from.
func envImage(env *asset.EnvironmentSpec) string {
	if env.Image != "" {
		return env.Image
	}
	return fmt.Sprintf("built from %s", env.Build.Path)
}

// containerTask is how node n runs job j's rank in a container: the
// location's mode, the node's size as the container's limits, the
// workspace's push registry and the logins of the registries the job's
// image comes from (and of the push registry), and no others. Nil for a
// job with no image to run. The base images of a build are named by its
// Dockerfile, which the server does not read: a build pulls them without
// a login unless they come from the push registry.
func (s *Services) containerTask(tx store.Tx, j *job.Job, n *node.Node) (*node.ContainerTask, error) {
	env := j.ResolvedEnvironment
	if env == nil || (env.Image == "" && env.Build == nil) {
		return nil, nil
	}
	loc, _ := s.catalog.Location(n.Location)
	ct := &node.ContainerTask{Mode: loc.ContainerMode(), VCPUs: n.VCPUs, MemoryGB: n.MemoryGB}
	if c, err := tx.GetCompute(j.Workspace, j.Compute); err == nil {
		ct.Network = node.SubnetNetwork(j.Workspace, &c.ComputeSpec)
	}
	var err error
	if ct.PushTo, ct.Registries, err = registries.ForTask(tx, s.cfg.SecretsKey, j.Workspace, env.Image); err != nil {
		return nil, err
	}
	return ct, nil
}

// checkSubnet applies what a compute's virtual network asks of a job: it
// runs in a container on the subnet's network (a job on the host would
// be silently outside it) and on one node (a multi-node job needs the
// host's network, across hosts). Its identity endpoint and the server
// are served on its container's own loopback by the agent.
func checkSubnet(c *compute.Compute, env *asset.EnvironmentSpec, nodes int) error {
	net := node.SubnetNetwork(c.Workspace, &c.ComputeSpec)
	if net == nil {
		return nil
	}
	where := fmt.Sprintf("compute %q is in virtual network %q, subnet %q", c.Name, net.VNet, net.Subnet)
	if env == nil || (env.Image == "" && env.Build == nil) {
		return core.FieldErrorf("environment", "%s: its jobs run in containers on the subnet's network, and this job names no image; name an environment with an image (environment: {image: <image>}, or azureml:<name>@latest)", where)
	}
	if nodes > 1 {
		return core.FieldErrorf("resources.instance_count", "%s: a job there runs on one node (a multi-node job needs the hosts' own network, outside the subnet), not %d", where, nodes)
	}
	return nil
}

// instanceEnvironment is the environment of a job that names none on a
// compute instance that runs in a container: the instance's own image,
// so that the job sees the instance's software, not the host's (it runs
// in a container of its own, on the host's network the instance
// shares). Nil for a cluster, or an instance that runs as host
// processes (its node reported no usable runtime).
func (s *Services) instanceEnvironment(tx store.Tx, c *compute.Compute) *asset.EnvironmentSpec {
	if !c.IsInstance() {
		return nil
	}
	loc, err := s.catalog.Location(c.Location)
	if err != nil || compute.InstanceIsolationAt(loc) != compute.IsolationContainer {
		return nil
	}
	if n, err := tx.GetNode(compute.InstanceNodeID(c, loc)); err == nil && n.Runtime != nil && !n.Runtime.Usable() {
		return nil
	}
	return &asset.EnvironmentSpec{Image: computes.InstanceImage(c, loc), Source: "the instance's image"}
}

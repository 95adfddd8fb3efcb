package job

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// DistributionKeys are the keys of a distribution mapping, Azure's for
// its three types: process_count_per_instance (pytorch, mpi),
// worker_count and parameter_server_count (tensorflow).
var DistributionKeys = compute.KeySchema{"type": nil, "process_count_per_instance": nil, "worker_count": nil, "parameter_server_count": nil}

// MaxTensorFlowTasks bounds worker_count + parameter_server_count, as
// MaxProcessCountPerInstance bounds a node's processes.
const MaxTensorFlowTasks = 4096

func decodeJobDistribution(raw json.RawMessage) (*Distribution, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("distribution", "must be a mapping")
	}
	var d Distribution
	var err error
	if d.Type, err = jobdecode.JobString(m["type"], "distribution.type"); err != nil {
		return nil, err
	}
	counts := []struct {
		key string
		dst *int
		min int
	}{
		{"process_count_per_instance", &d.ProcessCountPerInstance, 1},
		{"worker_count", &d.WorkerCount, 1},
		{"parameter_server_count", &d.ParameterServerCount, 0},
	}
	for _, c := range counts {
		v := compute.NonNull(m[c.key])
		if v == nil {
			continue
		}
		n, err := compute.CheckInteger("distribution."+c.key, v)
		if err != nil {
			return nil, err
		}
		if *n < c.min {
			return nil, core.FieldErrorf("distribution."+c.key, "must be %d or more, got %d", c.min, *n)
		}
		*c.dst = *n
	}
	return &d, nil
}

// normalizeDistribution puts a distribution's type in its canonical
// spelling and checks its counts against the job's instance count. A
// tensorflow job's worker_count defaults to the instance count (Azure's
// default) and its tasks (workers then parameter servers) are spread
// evenly over the nodes, so their number must be a multiple of the
// instance count. The counts of one type are refused on another: Azure's
// schema has them on one type only, and a count that would be ignored
// should not look as if it were obeyed.
func normalizeDistribution(d *Distribution, instances int) error {
	if d == nil {
		return nil
	}
	dt := strings.ToLower(strings.TrimSpace(d.Type))
	switch dt {
	case DistributionPyTorch, DistributionMPI, DistributionTensorFlow:
	case "":
		return core.FieldErrorf("distribution.type", "is required when distribution is given: pytorch, mpi or tensorflow")
	default:
		return core.FieldErrorf("distribution.type", "unknown distribution type %q; supported: pytorch, mpi, tensorflow", core.Short(d.Type))
	}
	d.Type = dt
	if dt == DistributionTensorFlow {
		return normalizeTensorFlow(d, instances)
	}
	switch {
	case d.WorkerCount != 0:
		return core.FieldErrorf("distribution.worker_count", "is tensorflow's; a %s job starts process_count_per_instance processes on each node", dt)
	case d.ParameterServerCount != 0:
		return core.FieldErrorf("distribution.parameter_server_count", "is tensorflow's; a %s job starts process_count_per_instance processes on each node", dt)
	}
	switch {
	case d.ProcessCountPerInstance < 0:
		return core.FieldErrorf("distribution.process_count_per_instance", "must be 1 or more, got %d", d.ProcessCountPerInstance)
	case d.ProcessCountPerInstance == 0:
		d.ProcessCountPerInstance = 1
	case d.ProcessCountPerInstance > MaxProcessCountPerInstance:
		return core.FieldErrorf("distribution.process_count_per_instance", "must be at most %d, got %d", MaxProcessCountPerInstance, d.ProcessCountPerInstance)
	}
	return nil
}

func normalizeTensorFlow(d *Distribution, instances int) error {
	if d.ProcessCountPerInstance != 0 {
		return core.FieldErrorf("distribution.process_count_per_instance", "is pytorch's and mpi's; a tensorflow job counts worker_count and parameter_server_count")
	}
	if d.WorkerCount < 0 {
		return core.FieldErrorf("distribution.worker_count", "must be 1 or more, got %d", d.WorkerCount)
	}
	if d.ParameterServerCount < 0 {
		return core.FieldErrorf("distribution.parameter_server_count", "must be 0 or more, got %d", d.ParameterServerCount)
	}
	if d.WorkerCount == 0 {
		d.WorkerCount = instances
	}
	tasks := d.WorkerCount + d.ParameterServerCount
	if tasks > MaxTensorFlowTasks {
		return core.FieldErrorf("distribution.worker_count", "worker_count + parameter_server_count must be at most %d, got %d", MaxTensorFlowTasks, tasks)
	}
	if tasks%instances != 0 || tasks/instances > MaxProcessCountPerInstance {
		return core.FieldErrorf("distribution.worker_count", "worker_count + parameter_server_count (%d + %d) must be a multiple of resources.instance_count (%d): each node runs as many tasks as every other", d.WorkerCount, d.ParameterServerCount, instances)
	}
	return nil
}

// ProcessesPerNode is how many processes each of a job's nodes starts:
// process_count_per_instance for pytorch and mpi, the tensorflow tasks
// divided among the nodes, 1 without a distribution.
func (d *Distribution) ProcessesPerNode(instances int) int {
	switch {
	case d == nil:
		return 1
	case d.Type == DistributionTensorFlow && instances > 0 && d.WorkerCount > 0:
		return (d.WorkerCount + d.ParameterServerCount) / instances
	case d.ProcessCountPerInstance > 0:
		return d.ProcessCountPerInstance
	}
	return 1
}

package paralleljob

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// componentKeys are the keys of a parallel component document (Azure's
// parallelComponent schema) besides SettingKeys.
var componentKeys = compute.KeySchema{
	"$schema": nil, "name": nil, "version": nil, "type": nil, "display_name": nil, "description": nil,
	"tags": nil, "is_deterministic": nil, "inputs": nil, "outputs": nil,
	"resources": compute.KeySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	// read-only keys of show output, ignored on input
	"id": compute.ReadOnly, "archived": compute.ReadOnly, "created_on": compute.ReadOnly, "created_by": compute.ReadOnly,
	"creation_context": compute.ReadOnly,
	// what a shown parallel component carries, as job.Component's JSON
	"command": compute.ReadOnly, "code": compute.ReadOnly, "environment": compute.ReadOnly, "parallel": compute.ReadOnly,
}

// sharedComponentKeys are the keys a parallel component reads as a
// command component does.
var sharedComponentKeys = []string{"name", "version", "display_name", "description", "tags", "is_deterministic", "inputs", "outputs", "resources"}

// DecodeComponent decodes a component mapping of any type Shoal runs: a
// parallel component (type: parallel) here, any other by
// job.DecodeComponentRaw. prefix is the mapping's path in its document
// ("jobs.score.component."), named by every error.
func DecodeComponent(raw json.RawMessage, prefix string) (*job.Component, error) {
	var typed struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(raw, &typed)
	if t, _ := typed.Type.(string); !strings.EqualFold(strings.TrimSpace(t), job.ComponentTypeParallel) {
		if prefix == "" {
			return job.DecodeComponent(raw) // a whole document
		}
		return job.DecodeComponentRaw(raw, prefix)
	}
	keys := maps.Clone(componentKeys)
	maps.Copy(keys, SettingKeys)
	obj, err := jobdecode.CheckedMapping(raw, strings.TrimSuffix(prefix, "."), keys)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, core.Errorf(core.EINVALID, "the component document must be a mapping of keys to values, got null")
	}
	p, task, err := DecodeSettings(obj, prefix)
	if err != nil {
		return nil, err
	}
	// The keys every component has, read as a command component's whose
	// command is the driver, code and environment the task's.
	part := obj.Pick(func(k string) bool { return slices.Contains(sharedComponentKeys, k) })
	part["type"] = json.RawMessage(`"command"`)
	cmd, err := json.Marshal(job.ParallelCommand(p.ProgramArguments))
	if err != nil {
		return nil, err
	}
	part["command"] = cmd
	b, err := json.Marshal(part)
	if err != nil {
		return nil, err
	}
	c, err := job.DecodeComponentRaw(b, prefix)
	if err != nil {
		return nil, err
	}
	c.Type, c.Parallel = job.ComponentTypeParallel, p
	c.Code, c.CodeAsset, c.Environment = task.Code, task.CodeAsset, task.Environment
	NormalizeSettings(p)
	return c, nil
}

// NormalizeComponent is job.NormalizeComponent for a component of any
// type Shoal runs: a parallel one's settings are then put in their
// spelling and checked against its inputs and outputs (CheckComponent).
func NormalizeComponent(c *job.Component, registered bool) error {
	if err := job.NormalizeComponent(c, registered); err != nil {
		return err
	}
	if c.Type != job.ComponentTypeParallel {
		return nil
	}
	NormalizeSettings(c.Parallel)
	return CheckComponent(c)
}

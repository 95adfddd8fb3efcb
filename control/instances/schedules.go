package instances

import (
	"encoding/json"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
)

// compiledSchedules is an instance's schedules compiled, with the spec
// they were compiled from.
type compiledSchedules struct {
	key  string
	list []*schedule.Schedule
}

// compiledSchedules compiles an instance's schedules, once per change of
// its spec.
func (c *Loop) compiledSchedules(comp *compute.Compute) []*schedule.Schedule {
	if comp.Schedules == nil || len(comp.Schedules.ComputeStartStop) == 0 {
		return nil
	}
	key := compute.ComputeKey(comp.Workspace, comp.Name)
	spec := jsonKey(comp.Schedules)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.schedules[key]; ok && cs.key == spec {
		return cs.list
	}
	list, err := schedule.CompileAll(comp.Schedules)
	if err != nil {
		// Stored schedules were valid when written; a zone database that
		// lost a zone is logged, not fatal.
		c.s.Logger().Warn("an instance's schedules do not compile", "instance", comp.Name, "err", err)
		return nil
	}
	if c.schedules == nil {
		c.schedules = map[string]compiledSchedules{}
	}
	c.schedules[key] = compiledSchedules{key: spec, list: list}
	return list
}

func jsonKey(v any) string {
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return ""
}

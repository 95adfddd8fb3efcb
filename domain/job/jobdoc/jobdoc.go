// Package jobdoc writes a stored job's definition back as the job
// document (the JSON of a job's YAML) that submits the same job: what a
// schedule's `create_job: azureml:<job>` (or ARM's
// jobDefinition.sourceJobId) submits at each firing. A stored pipeline
// keeps its steps decoded (bindings parsed, components resolved, nested
// pipelines expanded), which the pipeline decoder does not read back as
// they are; this package writes them in the document's own words.
package jobdoc

import (
	"encoding/json"
	"fmt"

	"github.com/shoal-ml/shoal/domain/job"
)

// Of is a stored job's definition as a job document, without its name
// (each submission names its job) and without what a submission
// computes (a pipeline's ignored inputs, a step's origin).
func Of(j *job.Job) (json.RawMessage, error) {
	var (
		doc map[string]any
		err error
	)
	switch {
	case j.Pipeline != nil:
		doc, err = pipeline(j.Pipeline)
	case j.Sweep != nil:
		doc, err = asMap(j.Sweep)
	default:
		doc, err = asMap(&j.JobSpec)
	}
	if err != nil {
		return nil, err
	}
	delete(doc, "name")
	return json.Marshal(doc)
}

// asMap is v's JSON as a mapping, numbers kept as written.
func asMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("the job is not a mapping")
	}
	return m, nil
}

// pipeline writes a pipeline's spec as its document.
func pipeline(spec *job.PipelineSpec) (map[string]any, error) {
	cp := *spec
	cp.Jobs, cp.IgnoredInputs = nil, nil
	cp.Settings.Ignored = nil
	doc, err := asMap(&cp)
	if err != nil {
		return nil, err
	}
	// Settings Shoal does not know are written back beside the others,
	// where the user wrote them.
	if len(spec.Settings.Ignored) > 0 {
		settings, _ := doc["settings"].(map[string]any)
		if settings == nil {
			settings = map[string]any{}
		}
		for k, v := range spec.Settings.Ignored {
			settings[k] = v
		}
		doc["settings"] = settings
	}
	steps := make(map[string]any, len(spec.Jobs))
	for name, s := range spec.Jobs {
		if s == nil {
			continue
		}
		d, err := step(s)
		if err != nil {
			return nil, fmt.Errorf("jobs.%s: %w", name, err)
		}
		steps[name] = d
	}
	doc["jobs"] = steps
	return doc, nil
}

// step writes one step: its component as its reference when it named
// one (the version it named is the version it runs), an inline command
// step's command, code and environment on the step, any other
// component (a mapping) as written; bindings as ${{…}} strings.
func step(s *job.PipelineStep) (map[string]any, error) {
	cp := *s
	cp.Component, cp.ComponentRef, cp.Inputs, cp.Outputs, cp.Sweep, cp.From = nil, "", nil, nil, nil, ""
	d, err := asMap(&cp)
	if err != nil {
		return nil, err
	}
	if in := stepInputs(s.Inputs); len(in) > 0 {
		d["inputs"] = in
	}
	if out := stepOutputs(s.Outputs); len(out) > 0 {
		d["outputs"] = out
	}
	key := "component"
	if s.Type == job.JobTypeSweep {
		key = "trial"
		if s.Sweep != nil {
			sw, err := asMap(s.Sweep)
			if err != nil {
				return nil, err
			}
			for k, v := range sw {
				if v != nil {
					d[k] = v
				}
			}
		}
	}
	c := s.Component
	switch {
	case s.ComponentRef != "":
		d[key] = s.ComponentRef
	case c == nil:
		return nil, fmt.Errorf("has neither a component nor a reference to one")
	case s.Type == job.JobTypeCommand && c.Name == "" && c.Type == job.ComponentTypeCommand:
		// An inline command step: its anonymous component's inputs and
		// outputs are the step's own, declared again by the decoder.
		d["command"] = c.Command
		if c.Code != "" {
			d["code"] = c.Code
		}
		if c.Environment != nil {
			d["environment"] = c.Environment
		}
	case s.Type == job.JobTypeParallel && c.Name == "" && c.Parallel != nil:
		// An inline parallel step: its settings on the step, its program
		// under task.
		if err := parallelStep(c, d); err != nil {
			return nil, err
		}
	default:
		cm, err := asMap(c)
		if err != nil {
			return nil, err
		}
		delete(cm, "created_on")
		delete(cm, "created_by")
		delete(cm, "archived")
		d[key] = cm
	}
	return d, nil
}

// stepInputs writes a step's inputs: a binding as its expression (with
// its type and mode, when given, as a mapping), a path as a mapping, a
// literal as its value.
func stepInputs(in map[string]*job.StepInput) map[string]any {
	out := make(map[string]any, len(in))
	for name, i := range in {
		switch {
		case i == nil:
		case i.Bind != "" && i.Type == "" && i.Mode == "":
			out[name] = i.Bind
		case i.Bind != "":
			out[name] = pathInput(i.Type, i.Bind, i.Mode)
		case i.Path != "":
			out[name] = pathInput(i.Type, i.Path, i.Mode)
		default:
			out[name] = i.Value
		}
	}
	return out
}

func pathInput(typ, path, mode string) map[string]any {
	m := map[string]any{"path": path}
	if typ != "" {
		m["type"] = typ
	}
	if mode != "" {
		m["mode"] = mode
	}
	return m
}

// stepOutputs writes a step's outputs: a bare binding as its
// expression, else a mapping (the binding as its path).
func stepOutputs(outs map[string]*job.StepOutput) map[string]any {
	out := make(map[string]any, len(outs))
	for name, o := range outs {
		if o == nil {
			out[name] = nil
			continue
		}
		if o.Bind != "" && o.Type == "" && o.Mode == "" && o.Name == "" && o.Version == "" {
			out[name] = o.Bind
			continue
		}
		m := map[string]any{}
		for k, v := range map[string]string{"type": o.Type, "mode": o.Mode, "path": o.Path, "name": o.Name, "version": o.Version} {
			if v != "" {
				m[k] = v
			}
		}
		if o.Bind != "" {
			m["path"] = o.Bind
		}
		out[name] = m
	}
	return out
}

// parallelStep writes an inline parallel step's settings into d: the
// parallel settings as the step's keys, the program under task.
func parallelStep(c *job.Component, d map[string]any) error {
	p, err := asMap(c.Parallel)
	if err != nil {
		return err
	}
	task := map[string]any{"type": "run_function"}
	for _, k := range []string{"entry_script", "program_arguments", "append_row_to"} {
		if v, ok := p[k]; ok {
			task[k] = v
			delete(p, k)
		}
	}
	if c.Code != "" {
		task["code"] = c.Code
	}
	if c.Environment != nil {
		task["environment"] = c.Environment
	}
	for k, v := range p {
		d[k] = v
	}
	d["task"] = task
	return nil
}

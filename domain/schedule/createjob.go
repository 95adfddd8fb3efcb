package schedule

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// decodeCreateJob reads `create_job` as Azure writes it: `azureml:<job>`
// (an existing job, resolved by the service); a mapping with `job:` (a
// job document, as the CLI sends a job file it read, or `azureml:<job>`)
// and overrides beside it, merged into the job as the SDK's merge_dict
// does; or a mapping without `job:`, the job itself. A local path
// (`./job.yml`) is refused: the server cannot read the user's files, the
// CLI reads it.
func decodeCreateJob(raw json.RawMessage) (*CreateJob, error) {
	var ref string
	if json.Unmarshal(raw, &ref) == nil {
		return jobRef(ref, "create_job")
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil || d == nil {
		return nil, core.FieldErrorf("create_job", "must be a job file (./job.yml), an existing job (azureml:<job>) or a mapping {job: …, <overrides>}")
	}
	inner, ok := d["job"]
	if !ok {
		// The job itself, inline.
		return &CreateJob{Job: append(json.RawMessage(nil), raw...)}, nil
	}
	delete(d, "job")
	overrides, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(inner, &ref) == nil {
		cj, err := jobRef(ref, "create_job.job")
		if err != nil {
			return nil, err
		}
		cj.Overrides = overrides
		return cj, nil
	}
	var base map[string]json.RawMessage
	if err := json.Unmarshal(inner, &base); err != nil || base == nil {
		return nil, core.FieldErrorf("create_job.job", "must be a job document, a job file (./job.yml) or an existing job (azureml:<job>)")
	}
	merged, err := MergeJob(inner, overrides)
	if err != nil {
		return nil, core.FieldErrorf("create_job", "%v", err)
	}
	return &CreateJob{Job: merged}, nil
}

// jobRef reads a reference to a job: azureml:<job> (or Azure's
// azureml:/subscriptions/…/jobs/<job>).
func jobRef(ref, field string) (*CreateJob, error) {
	ref = strings.TrimSpace(ref)
	name, ok := strings.CutPrefix(ref, "azureml:")
	if !ok {
		return nil, core.FieldErrorf(field, "%q is a local job file, which the server cannot read: `shoal schedule create -f schedule.yml` reads it beside the schedule file and sends the job; or name an existing job as azureml:<job>", core.Short(ref))
	}
	ws := ""
	if i := strings.LastIndex(name, "/jobs/"); i >= 0 {
		if w := strings.LastIndex(name[:i], "/workspaces/"); w >= 0 {
			ws = name[w+len("/workspaces/") : i]
		}
		name = name[i+len("/jobs/"):]
	}
	name = strings.Trim(name, "/")
	if name == "" || strings.ContainsAny(name, "/: ") {
		return nil, core.FieldErrorf(field, "%q must name a job: azureml:<job>", core.Short(ref))
	}
	return &CreateJob{SourceJob: name, SourceWorkspace: ws}, nil
}

// MergeJob merges overrides into a job document as azure-ai-ml's
// merge_dict does: a mapping merges key by key, recursively; any other
// value (a string, a list) replaces the job's. Either may be empty.
func MergeJob(job, overrides json.RawMessage) (json.RawMessage, error) {
	var base, over map[string]any
	if len(job) > 0 {
		v, err := decodeAny(job)
		if base, _ = v.(map[string]any); err != nil || base == nil {
			return nil, errors.New("the job must be a mapping")
		}
	}
	if len(overrides) > 0 {
		v, err := decodeAny(overrides)
		if over, _ = v.(map[string]any); err != nil || over == nil {
			return nil, errors.New("the overrides must be a mapping")
		}
	}
	if base == nil {
		base = map[string]any{}
	}
	mergeInto(base, over)
	return json.Marshal(base)
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

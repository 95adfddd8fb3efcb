package service

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// JobFields are what may change of a submitted job, as Azure changes
// them (a PUT of an existing job, `az ml job update`): everything else
// is its definition, which a job keeps (job_definition.go).
type JobFields struct {
	// DisplayName replaces the job's unless empty (a job always has
	// one).
	DisplayName string
	Description string
	// Tags replace the job's whole.
	Tags map[string]string
}

// JobUpdate is a change of a job's fields (`shoal job update`): nil
// pointers and empty maps leave the fields as they are.
type JobUpdate struct {
	DisplayName *string `json:"display_name,omitempty"`
	Description *string `json:"description,omitempty"`
	// SetTags adds or replaces tags; RemoveTags removes tags by name.
	SetTags    map[string]string `json:"set_tags,omitempty"`
	RemoveTags []string          `json:"remove_tags,omitempty"`
}

// UpdateJob changes a job's display name, description or tags, whatever
// its status (its definition never changes).
func (s *Services) UpdateJob(ctx context.Context, workspace, name string, u JobUpdate) (*job.Job, error) {
	return s.changeJobFields(ctx, workspace, name, func(f *JobFields) {
		if u.DisplayName != nil {
			f.DisplayName = *u.DisplayName
		}
		if u.Description != nil {
			f.Description = *u.Description
		}
		if len(u.SetTags) > 0 || len(u.RemoveTags) > 0 {
			f.Tags = maps.Clone(f.Tags)
			if f.Tags == nil {
				f.Tags = map[string]string{}
			}
			maps.Copy(f.Tags, u.SetTags)
			for _, k := range u.RemoveTags {
				delete(f.Tags, k)
			}
		}
	})
}

// updateJobFields gives an existing job a submitted document's fields.
func (s *Services) updateJobFields(ctx context.Context, workspace, name string, to JobFields) (*job.Job, error) {
	return s.changeJobFields(ctx, workspace, name, func(f *JobFields) {
		if to.DisplayName != "" {
			f.DisplayName = to.DisplayName
		}
		f.Description, f.Tags = to.Description, to.Tags
	})
}

// changeJobFields applies change to a job's fields and stores them, with
// an event saying what changed, when something did.
func (s *Services) changeJobFields(ctx context.Context, workspace, name string, change func(*JobFields)) (*job.Job, error) {
	var out *job.Job
	err := s.store.Update(ctx, func(tx store.Tx) error {
		j, err := s.getJob(tx, workspace, name)
		if err != nil {
			return err
		}
		out = j
		was := JobFields{DisplayName: j.DisplayName, Description: j.Description, Tags: j.Tags}
		now := was
		change(&now)
		if len(now.Tags) == 0 {
			now.Tags = nil
		}
		if err := checkJobFields(now); err != nil {
			return err
		}
		var changed []string
		if now.DisplayName != was.DisplayName {
			changed = append(changed, "display_name")
		}
		if now.Description != was.Description {
			changed = append(changed, "description")
		}
		if !maps.Equal(now.Tags, was.Tags) {
			changed = append(changed, "tags")
		}
		if len(changed) == 0 {
			return nil
		}
		j.DisplayName, j.Description, j.Tags = now.DisplayName, now.Description, now.Tags
		// A parent keeps its document: the same fields there too.
		if j.Pipeline != nil {
			j.Pipeline.DisplayName, j.Pipeline.Description, j.Pipeline.Tags = now.DisplayName, now.Description, now.Tags
		}
		if j.Sweep != nil {
			j.Sweep.DisplayName, j.Sweep.Description, j.Sweep.Tags = now.DisplayName, now.Description, now.Tags
		}
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		return AppendJobEvent(ctx, tx, j, "updated", strings.Join(changed, ", ")+" updated")
	})
	if err != nil {
		return nil, err
	}
	return s.jobView(out), nil
}

// checkJobFields checks fields as a job's document is checked.
func checkJobFields(f JobFields) error {
	if n := utf8.RuneCountInString(f.DisplayName); n > job.MaxJobDisplayNameLength {
		return core.FieldErrorf("display_name", "must be at most %d characters long (it has %d)", job.MaxJobDisplayNameLength, n)
	}
	if n := utf8.RuneCountInString(f.Description); n > core.MaxDescriptionLength {
		return core.FieldErrorf("description", "must be at most %d characters long (it has %d)", core.MaxDescriptionLength, n)
	}
	return core.ValidateTags(f.Tags)
}

// definitionConflict turns the refusal of a document under an existing
// job's name into one naming the first field of the definition that
// differs. When none differs, the stored job's hash is of another form
// (a parent job stored before the mutable fields left the hash): it is
// the same job, and same is true.
func (s *Services) definitionConflict(ctx context.Context, workspace string, d *jobDocument, err error) (same bool, _ error) {
	var existing *job.Job
	if ferr := s.store.View(ctx, func(tx store.Tx) (err error) {
		existing, err = s.getJob(tx, workspace, d.name())
		return err
	}); ferr != nil {
		return false, err
	}
	var stored any
	switch {
	case d.pipeline != nil && existing.Pipeline != nil:
		stored = existing.Pipeline
	case d.sweep != nil && existing.Sweep != nil:
		stored = existing.Sweep
	case d.command != nil && !existing.IsParent():
		stored = &existing.JobSpec
	default:
		return false, &core.Error{Code: core.ECONFLICT, Field: "type", Message: fmt.Sprintf(
			"type: job %q already exists and is a %s job: a job's type does not change (submit it under another name)", existing.Name, existing.Type)}
	}
	fields := changedFields(stored, d.spec())
	if len(fields) == 0 {
		return true, nil
	}
	return false, &core.Error{Code: core.ECONFLICT, Field: fields[0], Message: fmt.Sprintf(
		"%s: job %q already exists and its %s differs: only a submitted job's description, tags and display name change (submit the changed job under another name)",
		fields[0], existing.Name, fields[0])}
}

package service

import (
	"context"
	"sort"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
)

// A job acting as its submitter (identity: user_identity) submits jobs
// as its submitter may, but none that acts as the submitter in turn: a
// chain of such jobs would go on acting as the user after the job that
// started it ended (each link's token dies with its attempt, the next
// link does not), beyond what the user submitted.

// actsAsJob reports whether ctx's principal is a job acting as its
// submitter: a user's principal bound to a job's attempt.
func actsAsJob(ctx context.Context) bool {
	p := identity.PrincipalFrom(ctx)
	return p != nil && p.Kind == identity.PrincipalUser && p.AttemptID != ""
}

// chainedUserIdentity refuses what a job acting as its submitter
// submits when it would act as the submitter too (field: where it says
// so).
func chainedUserIdentity(ctx context.Context, field string, id *job.JobIdentity) error {
	if id == nil || id.Type != job.IdentityUserIdentity || !actsAsJob(ctx) {
		return nil
	}
	return &core.Error{Code: core.EFORBIDDEN, Field: field, Message: field +
		": a job acting as its submitter (user_identity) may not submit a job that acts as the submitter too: the chain would outlive the job; submit it as the user, or give it managed or aml_token"}
}

// checkChainedIdentity applies chainedUserIdentity to every identity a
// document names: a command's, a pipeline's and its steps', a sweep's.
func (d *jobDocument) checkChainedIdentity(ctx context.Context) error {
	switch {
	case d.pipeline != nil:
		if err := chainedUserIdentity(ctx, "identity", d.pipeline.Identity); err != nil {
			return err
		}
		steps := make([]string, 0, len(d.pipeline.Jobs))
		for name := range d.pipeline.Jobs {
			steps = append(steps, name)
		}
		sort.Strings(steps)
		for _, name := range steps {
			if s := d.pipeline.Jobs[name]; s != nil {
				if err := chainedUserIdentity(ctx, "jobs."+name+".identity", s.Identity); err != nil {
					return err
				}
			}
		}
		return nil
	case d.sweep != nil:
		return chainedUserIdentity(ctx, "identity", d.sweep.Identity)
	}
	return chainedUserIdentity(ctx, "identity", d.command.Identity)
}

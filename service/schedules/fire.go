package schedules

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/store"
)

// Firing is one firing to act on.
type Firing struct {
	// At is the trigger time.
	At time.Time
	// Late is set when At was missed (no server ran then): the job says
	// so in its tags and the schedule's event.
	Late bool
}

// Trigger fires a schedule now (`shoal schedule trigger`), as the
// caller, whether or not it is enabled: one job, named as a firing at
// the store's clock's minute (a second trigger in the same minute
// answers the same job). Its LastFireTime is left alone, so that the
// trigger's own firings go on as planned.
func (s *Service) Trigger(ctx context.Context, workspace, name string) (*job.Job, error) {
	var (
		sc  *dschedule.JobSchedule
		now time.Time
	)
	err := s.cfg.Store.View(ctx, func(tx store.Tx) (err error) {
		sc, err = get(tx, workspace, name)
		now = tx.Now()
		return err
	})
	if err != nil {
		return nil, err
	}
	at := now.UTC().Truncate(time.Minute)
	j, _, err := s.submit(ctx, sc, at, "")
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("triggered by %s at %s: submitted job %s", identity.ActorName(ctx), stamp(now), j.Name)
	return j, s.record(ctx, sc, nil, j.Name, msg, identity.ActorName(ctx))
}

// Fire acts on a schedule's firing due at f.At (the loop control/schedules
// finds it with the trigger's engine): in order, the schedule is read
// again (a firing at or before its LastFireTime, or of a schedule since
// disabled or deleted, is not acted on); its last writer's right to
// submit jobs in the workspace is checked (else the firing is skipped
// and says why); the job is submitted under FiredJobName (idempotent: a
// job of that name already there is the firing's, submitted before a
// restart or by a server since fenced); and the firing is recorded
// (LastFireTime, LastJob, Fires, LastMessage and a schedule event) in
// one transaction that re-checks LastFireTime. A firing the job service
// refuses (its compute deleted since, a quota) is recorded as failed
// with the service's words rather than tried again at every pass; an
// error of the store is returned, to be tried again.
func (s *Service) Fire(ctx context.Context, workspace, name string, f Firing, now time.Time) error {
	var sc *dschedule.JobSchedule
	err := s.cfg.Store.View(ctx, func(tx store.Tx) (err error) {
		sc, err = tx.GetJobSchedule(workspace, name)
		return err
	})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil // deleted since the loop read it
	}
	if err != nil {
		return err
	}
	if !sc.IsEnabled || done(sc, f.At) || !f.At.After(sc.UpdatedOn) {
		// A firing at or before the schedule's last write (an update, or
		// an enable, since the loop read it) belongs to a trigger or a
		// job it no longer has: firings before a write are never caught
		// up.
		return nil
	}
	at := f.At
	p := lastWriter(sc)
	if err := s.cfg.Authorizer.Authorize(ctx, p, sc.Workspace, identity.ActJobsWrite); err != nil {
		if code := core.ErrorCode(err); code != core.EFORBIDDEN && code != core.EUNAUTHORIZED {
			return err
		}
		msg := fmt.Sprintf("skipped the firing at %s: its last writer %s may no longer submit jobs in workspace %s (%s); update the schedule as someone who may", stamp(at), sc.UpdatedBy, sc.Workspace, core.ErrorMessage(err))
		return s.record(ctx, sc, &at, "", msg, "system")
	}
	late := ""
	if f.Late {
		late = fmt.Sprintf("missed at %s, started at %s", stamp(at), stamp(now))
	}
	j, existed, err := s.submit(identity.WithPrincipal(ctx, p), sc, at, late)
	var msg string
	switch {
	case err == nil && existed:
		msg = fmt.Sprintf("fired at %s: job %s was already submitted for this firing", stamp(at), j.Name)
	case err == nil && late != "":
		msg = fmt.Sprintf("fired late: the %s firing was missed while no server ran; started at %s as job %s", stamp(at), stamp(now), j.Name)
	case err == nil:
		msg = fmt.Sprintf("fired at %s: submitted job %s", stamp(at), j.Name)
	case core.ErrorCode(err) == core.ECONFLICT && core.ErrorField(err) == "name":
		// The firing's job was submitted already (before a restart, or
		// by a server fenced since), and said it was late differently.
		j = &job.Job{JobSpec: job.JobSpec{Name: dschedule.FiredJobName(sc.Name, at)}}
		msg = fmt.Sprintf("fired at %s: job %s was already submitted for this firing", stamp(at), j.Name)
	case retryable(err):
		return err
	default:
		msg = fmt.Sprintf("the firing at %s failed: %s", stamp(at), core.ErrorMessage(err))
		return s.record(ctx, sc, &at, "", msg, "system")
	}
	return s.record(ctx, sc, &at, j.Name, msg, sc.UpdatedBy)
}

// retryable reports whether a submission's error is the server's (the
// store unavailable, this server fenced), to be tried again, rather
// than the job's.
func retryable(err error) bool {
	switch core.ErrorCode(err) {
	case core.EINVALID, core.ENOTFOUND, core.ECONFLICT, core.EFORBIDDEN, core.EQUOTA:
		return false
	}
	return true
}

// done reports whether a firing at `at` was acted on.
func done(sc *dschedule.JobSchedule, at time.Time) bool {
	return sc.Status.LastFireTime != nil && !at.After(*sc.Status.LastFireTime)
}

// lastWriter is the principal a schedule's firings act as.
func lastWriter(sc *dschedule.JobSchedule) *identity.Principal {
	id := sc.UpdatedByPrincipal
	if id == identity.AdminPrincipalID {
		return &identity.Principal{ID: id, Name: sc.UpdatedBy, Kind: identity.PrincipalAdmin, Admin: true}
	}
	return &identity.Principal{ID: id, Name: sc.UpdatedBy, Kind: identity.PrincipalUser}
}

// stamp is a time as messages show it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// submit submits a firing's job under FiredJobName; late, when set, is
// the shoal.schedule.late tag. existed reports that the job was there.
func (s *Service) submit(ctx context.Context, sc *dschedule.JobSchedule, at time.Time, late string) (*job.Job, bool, error) {
	name := dschedule.FiredJobName(sc.Name, at)
	tags := map[string]string{dschedule.TagSchedule: sc.Name, dschedule.TagTriggerTime: at.UTC().Format(time.RFC3339)}
	if late != "" {
		tags[dschedule.TagLate] = late
	}
	if inv := sc.InvokeBatchEndpoint; inv != nil {
		if s.cfg.Batch == nil {
			return nil, false, core.FieldErrorf("invoke_batch_endpoint", "is not available on this server")
		}
		j, err := s.cfg.Batch.Invoke(ctx, sc.Workspace, inv.Endpoint, &batch.Invocation{
			Input: batch.Input{Path: inv.Input, Type: inv.InputType}, DeploymentName: inv.Deployment, JobName: name, OutputPath: inv.OutputPath})
		return j, false, err
	}
	if err := s.nameFree(ctx, sc, name); err != nil {
		return nil, false, err
	}
	doc, err := dschedule.ExpandJob(sc.CreateJob.Job, name, at)
	if err != nil {
		return nil, false, err
	}
	var fields map[string]json.RawMessage // numbers kept as written
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, false, err
	}
	merged := map[string]any{}
	if len(fields["tags"]) > 0 {
		_ = json.Unmarshal(fields["tags"], &merged) // not a mapping: the firing's tags replace it
	}
	if merged == nil { // tags: null
		merged = map[string]any{}
	}
	for k, v := range tags {
		merged[k] = v
	}
	var err2 error
	if fields["tags"], err2 = json.Marshal(merged); err2 != nil {
		return nil, false, err2
	}
	if fields["name"], err2 = json.Marshal(name); err2 != nil {
		return nil, false, err2
	}
	if body, err := json.Marshal(fields); err != nil {
		return nil, false, err
	} else {
		j, created, err := s.cfg.Jobs.SubmitJobDocument(ctx, sc.Workspace, name, body)
		return j, !created, err
	}
}

// record writes a firing's outcome: at (nil for a trigger, which leaves
// LastFireTime alone) re-checked against LastFireTime in the same
// transaction, so that two servers never both record one firing.
func (s *Service) record(ctx context.Context, sc *dschedule.JobSchedule, at *time.Time, jobName, msg, actor string) error {
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.GetJobSchedule(sc.Workspace, sc.Name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		if at != nil {
			if done(cur, *at) {
				return nil
			}
			t := *at
			cur.Status.LastFireTime = &t
		}
		if jobName != "" {
			cur.Status.LastJob = jobName
			cur.Status.Fires++
		}
		cur.Status.LastMessage = msg
		if err := tx.PutJobSchedule(cur); err != nil {
			return err
		}
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: cur.Workspace, ResourceType: core.ResourceSchedule,
			ResourceName: cur.Name, Kind: core.EventScheduleFired, Actor: actor, Reason: strings.TrimSpace(msg)})
	})
}

// nameFree refuses a firing's job name held by a job this schedule did
// not submit (a user named a job so): submitting under it would claim
// that job as the firing's, and update its tags. A job of the name that
// the schedule submitted is the firing's, submitted before.
func (s *Service) nameFree(ctx context.Context, sc *dschedule.JobSchedule, name string) error {
	return s.cfg.Store.View(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(sc.Workspace, name)
		switch {
		case core.ErrorCode(err) == core.ENOTFOUND:
			return nil
		case err != nil:
			return err
		case strings.EqualFold(j.Tags[dschedule.TagSchedule], sc.Name):
			return nil
		}
		return &core.Error{Code: core.ECONFLICT, Field: "create_job", Message: fmt.Sprintf("job %s, this firing's name, is taken by a job schedule %s did not submit; it was not touched: rename or delete that job", name, sc.Name)}
	})
}

// Package schedules is the request service of job schedules (`shoal
// schedule`, Azure's schedule YAML and, through part F, ARM's
// `schedules`): keeping them, their trigger compiled and their job
// checked at create, and firing them — at once (`trigger`) or when the
// loop control/schedules finds a firing due (Fire) — through the same
// job service as any job, as the schedule's last writer.
package schedules

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdoc"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/service/batchendpoints"
	"github.com/shoal-ml/shoal/store"
)

// Jobs is what a schedule needs of the job service (service.Services).
type Jobs interface {
	// ValidateJobDocument checks a job document without submitting it
	// and returns its type.
	ValidateJobDocument(ctx context.Context, workspace string, body []byte) (string, error)
	// SubmitJobDocument submits a job document, idempotent by name.
	SubmitJobDocument(ctx context.Context, workspace, urlName string, body []byte) (*job.Job, bool, error)
}

// Invoker invokes a batch endpoint (service/batchendpoints).
type Invoker interface {
	Invoke(ctx context.Context, workspace, endpoint string, inv *batch.Invocation) (*job.Job, error)
}

// Config configures a Service.
type Config struct {
	Store store.Store
	Jobs  Jobs
	// Batch invokes batch endpoints; nil: invoke_batch_endpoint is
	// refused.
	Batch Invoker
	// Authorizer checks, at each firing, that the schedule's last writer
	// may still submit jobs in its workspace.
	Authorizer identity.Authorizer
}

// Service keeps job schedules and fires them.
type Service struct{ cfg Config }

// New returns a Service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// Services are what Over builds a Service over: the request services
// (service.Services), which submit and check jobs and authorize.
type Services interface {
	Store() store.Store
	Files() store.Files
	Jobs
	batchendpoints.Jobs
	identity.Authorizer
}

// Over returns the Service over the request services: jobs submitted and
// checked by them, batch endpoints invoked through
// service/batchendpoints, the last writer's rights checked by their
// authorizer. The native API, ARM and the loop control/schedules each
// build theirs; it holds no state of its own.
func Over(s Services) *Service {
	return New(Config{Store: s.Store(), Jobs: s, Authorizer: s,
		Batch: batchendpoints.New(batchendpoints.Config{Store: s.Store(), Jobs: s, Artifacts: s.Files()})})
}

// CreateOrUpdate creates a schedule or replaces the one of its name
// (Azure's create_or_update): its trigger is compiled and its job
// resolved (azureml:<job> read from the stored job, overrides merged)
// and checked as `POST …/jobs` would, so that a schedule that cannot
// fire is refused now. An update keeps who created it and when, whether
// it is enabled, and its firings' status; the caller becomes its last
// writer, whose rights its firings use, and firings before now are not
// caught up. Reports whether it was created.
func (s *Service) CreateOrUpdate(ctx context.Context, workspace string, sc *dschedule.JobSchedule) (*dschedule.JobSchedule, bool, error) {
	if err := dschedule.ValidateName(sc.Name); err != nil {
		return nil, false, err
	}
	if _, err := schedule.CompileTrigger(sc.Trigger, ""); err != nil {
		return nil, false, err
	}
	if err := s.resolve(ctx, workspace, sc); err != nil {
		return nil, false, err
	}
	created := false
	// The transaction fills in sc's stored fields; a run again
	// (store.Store.Update) starts from the request's.
	request := *sc
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		*sc, created = request, false
		w, err := core.WorkspaceForWrite(tx, workspace)
		if err != nil {
			return err
		}
		now := tx.Now()
		sc.Workspace, sc.UpdatedBy, sc.UpdatedByPrincipal, sc.UpdatedOn = w.Name, identity.ActorName(ctx), identity.ActingPrincipalID(ctx), now
		old, err := tx.GetJobSchedule(w.Name, sc.Name)
		switch {
		case err == nil:
			sc.Name, sc.CreatedBy, sc.CreatedOn, sc.IsEnabled, sc.Status, sc.Version = old.Name, old.CreatedBy, old.CreatedOn, old.IsEnabled, old.Status, old.Version+1
		case core.ErrorCode(err) == core.ENOTFOUND:
			list, err := tx.ListJobSchedules(w.Name)
			if err != nil {
				return err
			}
			if len(list) >= dschedule.MaxJobSchedules {
				return &core.Error{Code: core.EQUOTA, Field: "name", Message: fmt.Sprintf("workspace %s has %d schedules, the most it may have; delete one first (shoal schedule delete -n NAME)", w.Name, len(list))}
			}
			created = true
			sc.CreatedBy, sc.CreatedOn, sc.IsEnabled, sc.Status, sc.Version = sc.UpdatedBy, now, true, dschedule.ScheduleStatus{}, 1
		default:
			return err
		}
		if inv := sc.InvokeBatchEndpoint; inv != nil {
			if _, err := tx.GetBatchEndpoint(w.Name, inv.Endpoint); core.ErrorCode(err) == core.ENOTFOUND {
				return core.FieldErrorf("invoke_batch_endpoint.endpoint", "batch endpoint %q is not in workspace %s; see `shoal batch-endpoint list`", inv.Endpoint, w.Name)
			} else if err != nil {
				return err
			}
		}
		return tx.PutJobSchedule(sc)
	})
	if err != nil {
		return nil, false, err
	}
	withNext(sc, sc.UpdatedOn)
	return sc, created, nil
}

// resolve completes a schedule's create_job: the existing job it names
// read, overrides merged, the job's own name dropped (each firing names
// it), and the document checked as a submission would be.
func (s *Service) resolve(ctx context.Context, workspace string, sc *dschedule.JobSchedule) error {
	if sc.InvokeBatchEndpoint != nil {
		if s.cfg.Batch == nil {
			return core.FieldErrorf("invoke_batch_endpoint", "is not available on this server")
		}
		return nil
	}
	cj := sc.CreateJob
	if cj == nil {
		return core.FieldErrorf("create_job", "is required: the job each firing submits")
	}
	if cj.SourceWorkspace != "" && !strings.EqualFold(cj.SourceWorkspace, workspace) {
		return core.FieldErrorf("create_job", "azureml:%s names a job of workspace %q: a schedule submits jobs of its own workspace (%s) only", core.Short(cj.SourceJob), core.Short(cj.SourceWorkspace), workspace)
	}
	if cj.SourceJob != "" {
		doc, err := s.jobDocument(ctx, workspace, cj.SourceJob)
		if err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.FieldErrorf("create_job", "azureml:%s: %s", cj.SourceJob, core.ErrorMessage(err))
			}
			return err
		}
		if cj.Job, err = dschedule.MergeJob(doc, cj.Overrides); err != nil {
			return core.FieldErrorf("create_job", "%v", err)
		}
		cj.Overrides = nil
	}
	doc, err := withoutName(cj.Job)
	if err != nil {
		return core.FieldErrorf("create_job.job", "must be a job document (a mapping)")
	}
	cj.Job = doc
	// Checked as a firing will submit it, its expressions replaced.
	sample, err := dschedule.ExpandJob(doc, dschedule.FiredJobName(sc.Name, time.Unix(0, 0)), time.Unix(0, 0))
	if err != nil {
		return err
	}
	typ, err := s.cfg.Jobs.ValidateJobDocument(ctx, workspace, sample)
	if err != nil {
		return prefixJobError(err)
	}
	if cj.Type = typ; typ == "" {
		cj.Type = job.JobTypeCommand
	}
	return nil
}

// prefixJobError names a job's error under create_job.job, so that a
// user sees it is the schedule's job that is wrong.
func prefixJobError(err error) error {
	ce, ok := err.(*core.Error)
	if !ok || ce.Code != core.EINVALID && ce.Code != core.ENOTFOUND {
		return err
	}
	field := "create_job.job"
	if ce.Field != "" {
		field += "." + ce.Field
	}
	return &core.Error{Code: ce.Code, Field: field, Message: "create_job.job: " + ce.Message}
}

// withNext fills the schedule's next fire time after now (nil when
// disabled, past its end, or never).
func withNext(sc *dschedule.JobSchedule, now time.Time) {
	sc.Status.NextFireTime = nil
	if !sc.IsEnabled {
		return
	}
	c, err := schedule.CompileTrigger(sc.Trigger, "")
	if err != nil {
		return
	}
	if n := c.Next(now); !n.IsZero() {
		n = n.UTC()
		sc.Status.NextFireTime = &n
	}
}

// Get returns a schedule, its next fire time computed at the store's
// clock. Returns ENOTFOUND.
func (s *Service) Get(ctx context.Context, workspace, name string) (out *dschedule.JobSchedule, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if out, err = get(tx, workspace, name); err == nil {
			withNext(out, tx.Now())
		}
		return err
	})
	return out, err
}

// get reads a schedule, the workspace's absence said first.
func get(tx store.Tx, workspace, name string) (*dschedule.JobSchedule, error) {
	if err := workspaceThere(tx, workspace); err != nil {
		return nil, err
	}
	return tx.GetJobSchedule(workspace, name)
}

// workspaceThere says a workspace's absence as every request does.
func workspaceThere(tx store.Tx, workspace string) error {
	_, err := tx.GetWorkspace(workspace)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return core.WorkspaceNotFound(workspace)
	}
	return err
}

// List returns a workspace's schedules by name, each with its next fire
// time.
func (s *Service) List(ctx context.Context, workspace string) (out []*dschedule.JobSchedule, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if err := workspaceThere(tx, workspace); err != nil {
			return err
		}
		if out, err = tx.ListJobSchedules(workspace); err != nil {
			return err
		}
		for _, sc := range out {
			withNext(sc, tx.Now())
		}
		return nil
	})
	return out, err
}

// Delete deletes a schedule; the jobs it submitted stay.
func (s *Service) Delete(ctx context.Context, workspace, name string) error {
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		err := workspaceThere(tx, workspace)
		if err == nil {
			err = tx.DeleteJobSchedule(workspace, name)
		}
		return err
	})
}

// SetEnabled enables or disables a schedule (`shoal schedule enable`,
// `disable`). Enabling makes the caller its last writer and starts its
// firings from now: those missed while it was disabled are not caught
// up.
func (s *Service) SetEnabled(ctx context.Context, workspace, name string, enabled bool) (out *dschedule.JobSchedule, err error) {
	err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if out, err = get(tx, workspace, name); err != nil {
			return err
		}
		if out.IsEnabled == enabled {
			return nil
		}
		out.IsEnabled, out.Version = enabled, out.Version+1
		out.UpdatedBy, out.UpdatedByPrincipal, out.UpdatedOn = identity.ActorName(ctx), identity.ActingPrincipalID(ctx), tx.Now()
		return tx.PutJobSchedule(out)
	})
	if err != nil {
		return nil, err
	}
	withNext(out, out.UpdatedOn)
	return out, nil
}

// jobDocument is an existing job's definition as a job document (its
// kind's spec, without its name): what `create_job: azureml:<job>`
// submits at each firing. Returns ENOTFOUND naming the job.
func (s *Service) jobDocument(ctx context.Context, workspace, name string) (json.RawMessage, error) {
	var j *job.Job
	err := s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if err := workspaceThere(tx, workspace); err != nil {
			return err
		}
		var err error
		if j, err = tx.GetJob(workspace, name); core.ErrorCode(err) == core.ENOTFOUND {
			return &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("job %s is not in workspace %s; see `shoal job list`", name, workspace)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// A pipeline or sweep is written back in its document's words (its
	// steps' bindings and components as a submission reads them).
	return jobdoc.Of(j)
}

// withoutName is a job document without its name.
func withoutName(doc json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage // numbers kept as written
	if err := json.Unmarshal(doc, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("not a mapping")
	}
	delete(fields, "name")
	return json.Marshal(fields)
}

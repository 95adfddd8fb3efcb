package scheduling

import (
	"strings"
	"sync"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// Placement: which queued job a free node takes is decided by one
// function, scheduler.Schedule, over a snapshot whose jobs are built by
// QueueJob. Controller passes (control/schedule.go) and a rank report's hand-on
// (handOn, below) both go through them, so a node freed by a report goes
// where a pass would send it.

// budgetBlockedPriority is the queue priority a blocked user's jobs are
// scheduled at: below every real one (low is 1), so that a node added for
// another user's job goes to that job, not to a blocked one ahead of it in
// the queue; a node no other job wants still takes the blocked user's work.
const budgetBlockedPriority = 0

// QueueJob is the scheduler's view of a queued job; demoted says its
// submitter is over a block budget (blockedBy).
func QueueJob(ref store.QueuedJobRef, demoted bool) scheduler.Job {
	return QueueJobKeyed(ref, demoted, ref.Workspace+"/"+ref.Name, compute.ComputeKey(ref.Workspace, ref.ComputeKey))
}

// QueueJobKeyed is QueueJob with the job's ID (workspace/name) and its
// compute's key already built: a pass over a long queue builds each once.
func QueueJobKeyed(ref store.QueuedJobRef, demoted bool, id, cluster string) scheduler.Job {
	prio := ref.Priority
	if demoted {
		prio = budgetBlockedPriority
	}
	return scheduler.Job{ID: id, Cluster: cluster, Priority: prio, Seq: ref.Seq, InstanceCount: ref.InstanceCount, Image: ref.Image}
}

// NodeImages reports whether c's nodes run one image each (its location
// is a kubernetes namespace), so that placement matches images.
func NodeImages(cat *catalog.Catalog, c *compute.Compute) bool {
	loc, err := cat.Location(c.Location)
	return err == nil && loc.NodeImage != ""
}

// BlockedBy returns why j's submitter may get no new node (the reason of
// the user's reached block budget), or "". users are the blocked users of
// j's workspace, by lower-cased name.
func BlockedBy(users map[string]string, j *job.Job) string {
	if len(users) == 0 {
		return ""
	}
	if r := users[strings.ToLower(j.CreatedBy)]; r != "" {
		return r
	}
	name := j.CreatedByPrincipal
	if _, n, ok := strings.Cut(name, ":"); ok {
		name = n // the principal's ID without its kind ("user:")
	}
	return users[strings.ToLower(name)]
}

// BudgetGate holds the block budgets the controller found reached when it
// last priced them (checkBudgets): scale-up reads the workspace and tag
// blocks, placement the user blocks, in passes and hand-ons alike.
type BudgetGate struct {
	mu     sync.Mutex
	blocks money.BudgetBlocks
	priced bool // checkBudgets ran in this process
}

func (g *BudgetGate) Set(b money.BudgetBlocks) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.blocks, g.priced = b, true
}

// Get returns the blocks (never modified once set) and whether they were
// ever priced here.
func (g *BudgetGate) Get() (money.BudgetBlocks, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.blocks, g.priced
}

// Demoted reports whether j's submitter is over a block budget, for a
// hand-on. Where the budgets were never priced (a replica that is not the
// leader runs no controller), a job whose user has any block budget
// counts as demoted: the leader's pass, which knows, places it.
func (g *BudgetGate) Demoted(tx store.Tx, j *job.Job) (bool, error) {
	b, priced := g.Get()
	if priced {
		return BlockedBy(b.Users[strings.ToLower(j.Workspace)], j) != "", nil
	}
	list, err := tx.ListBudgets(j.Workspace)
	if err != nil || len(list) == 0 {
		return false, err
	}
	users := map[string]string{}
	for _, b := range list {
		if u, ok := strings.CutPrefix(b.Scope, "user:"); ok && b.Action == money.BudgetBlock {
			users[strings.ToLower(u)] = "budget " + b.Describe()
		}
	}
	return BlockedBy(users, j) != "", nil
}

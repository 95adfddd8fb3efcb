package control

import (
	"context"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/scheduler"
	"github.com/shoal-ml/shoal/service"
)

// Services is what the loops ask of the request services: the store and
// settings they share, the transitions a request can also take (placing a
// job, losing a node, failing a deleted compute's queue), and the
// in-memory state the request handlers read (wait reasons, budget blocks,
// agents' long polls). It holds what the loops with packages of their own
// need (accounting.Services, instances.Services, nodes.Services), since the controller
// builds them. *service.Services implements it; the interface lives here,
// with its consumers.
type Services interface {
	accounting.Services
	instances.Services
	nodes.Services

	// Config is the services' configuration, defaults filled in.
	Config() service.Config
	// Observe tells the observer the jobs a transaction started and
	// ended.
	Observe() service.Observer

	// Place starts a queued job on nodes the scheduler chose.
	Place(ctx context.Context, tx shoal.Tx, ref shoal.QueuedJobRef, nodeIDs []string, st *service.State) (bool, error)

	// ReplaceReasons and SetReasonCode keep the queued jobs' wait
	// reasons the API shows.
	ReplaceReasons(r map[string]scheduler.Reason)
	SetReasonCode(id, code string) bool

	// BudgetBlocks are the blocking budgets the accounting loop found
	// reached, and whether it has priced them yet.
	BudgetBlocks() (service.BudgetBlocks, bool)
}

var _ Services = (*service.Services)(nil)

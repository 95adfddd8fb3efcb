package control

import (
	"context"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/control/scaling"
	"github.com/shoal-ml/shoal/live"
	"github.com/shoal-ml/shoal/service"
)

// Services is what the controller asks of the request services: what the
// loops it builds need (each declares its own interface) and what its own
// passes use — placing a job, keeping the queued jobs' wait reasons, and
// evicting a node for simulated preemption. *service.Services implements
// it; the interface lives here, with its consumers.
type Services interface {
	accounting.Services
	accounting.BudgetReader
	instances.Services
	nodes.Services
	scaling.Services

	// Config is the services' configuration, defaults filled in.
	Config() service.Config

	// Place starts a queued job on nodes the scheduler chose.
	Place(ctx context.Context, tx shoal.Tx, ref shoal.QueuedJobRef, nodeIDs []string, st *service.State) (bool, error)

	// WaitReasons keeps the queued jobs' wait reasons the API shows on
	// every replica.
	WaitReasons() live.WaitReasons
}

var _ Services = (*service.Services)(nil)

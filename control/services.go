package control

import (
	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/blobblocks"
	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/control/preemption"
	"github.com/shoal-ml/shoal/control/scaling"
	"github.com/shoal-ml/shoal/control/schedules"
	"github.com/shoal-ml/shoal/control/sweeps"
	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/service"
)

// Services is what the controller asks of the request services: what the
// loops it builds need (each declares its own interface) and the
// configuration it builds them with. *service.Services implements
// it; the interface lives here, with its consumers.
type Services interface {
	accounting.Services
	accounting.BudgetReader
	blobblocks.Services
	instances.Services
	nodes.Services
	pipelines.Services
	placement.Services
	preemption.Services
	scaling.Services
	schedules.Services
	sweeps.Services
	watch.Services

	// Config is the services' configuration, defaults filled in.
	Config() service.Config
}

var _ Services = (*service.Services)(nil)

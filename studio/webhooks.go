package studio

import (
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/service/webhooks"
)

// recentDeliveries is how many of each webhook's deliveries the page
// shows (`shoal webhook deliveries` lists more).
const recentDeliveries = 10

// hookRow is a webhook and its latest deliveries.
type hookRow struct {
	*notify.Webhook
	Deliveries []*notify.Delivery
}

// webhooksPage lists the workspace's webhooks and their recent
// deliveries, to its Owners alone (webhooks/read), as the API's routes
// allow them. It is read-only: webhooks are made with `shoal webhook
// create`, whose answer is the only place their secret shows.
func (s *Studio) webhooksPage(q *req) error {
	if err := s.allow(q, identity.ActWebhooksRead); err != nil {
		return err
	}
	svc := webhooks.New(webhooks.Config{Store: s.cfg.Svc.Store(), SecretsKey: s.cfg.Svc.SecretsKey()})
	list, err := svc.List(q.ctx, q.workspace)
	if err != nil {
		return err
	}
	rows := make([]hookRow, 0, len(list))
	for _, w := range list {
		ds, err := svc.ListDeliveries(q.ctx, q.workspace, w.Name, recentDeliveries)
		if err != nil {
			return err
		}
		rows = append(rows, hookRow{Webhook: w, Deliveries: ds})
	}
	return s.render(q, "webhooks", "Webhooks", "webhooks", map[string]any{"Hooks": rows})
}

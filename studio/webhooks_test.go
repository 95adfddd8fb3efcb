package studio_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/store"
)

// The webhooks page shows an Owner the workspace's webhooks and their
// recent deliveries (the receiver's last answer, the next try), never a
// secret; a Contributor and a Reader are refused, as the API refuses
// them.
func TestWebhooksPageOwnersOnly(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	olga := userWithRole(t, svc, admin, "olga", "Owner")
	carl := userWithRole(t, svc, admin, "carl", "Contributor")
	rita := userWithRole(t, svc, admin, "rita", "Reader")
	const secret = "studio-never-shows-this-webhook-secret"
	err := svc.Store().Update(admin, func(tx store.Tx) error {
		if err := tx.PutWebhook(&notify.Webhook{Workspace: core.DefaultWorkspace, Name: "ops", URL: "https://hooks.example.com/shoal",
			Events: []string{notify.JobFailed, notify.NodeLost}, SecretHint: "ab12…", CreatedBy: "olga"}, []byte("sealed:v1:"+secret)); err != nil {
			return err
		}
		d := &notify.Delivery{Workspace: core.DefaultWorkspace, Webhook: "ops", Channel: notify.ChannelWebhook, Target: "https://hooks.example.com/shoal",
			Event: notify.JobFailed, Key: "job:j1", Payload: json.RawMessage(`{}`)}
		if _, err := tx.InsertDelivery(d); err != nil {
			return err
		}
		d.Attempts, d.StatusCode, d.LastError, d.Status = 1, 500, "HTTP 500: <b>receiver down</b>", notify.DeliveryPending
		return tx.UpdateDelivery(d)
	})
	if err != nil {
		t.Fatal(err)
	}
	status, body := page(t, ts, "/webhooks", olga)
	if status != http.StatusOK {
		t.Fatalf("owner: %d %s", status, body)
	}
	for _, want := range []string{"https://hooks.example.com/shoal", "job_failed, node_lost", "ab12… (never shown)", "500 HTTP 500: &lt;b&gt;receiver down&lt;/b&gt;", "pending",
		`href="/webhooks" aria-current="page"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page misses %s", want)
		}
	}
	if strings.Contains(body, secret) || strings.Contains(body, "<b>receiver") {
		t.Error("the page shows the secret or the receiver's unescaped answer")
	}
	for who, ctx := range map[string]string{"a Contributor": carl, "a Reader": rita} {
		if status, body := page(t, ts, "/webhooks", ctx); status != http.StatusForbidden || strings.Contains(body, "hooks.example.com") {
			t.Errorf("%s: %d", who, status)
		}
	}
}

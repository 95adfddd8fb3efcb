package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
)

// newLoggedEnv is newTestEnv whose API layer logs, debug included, to
// the buffer returned: the tests of secrets read it for leaks.
func newLoggedEnv(t *testing.T) (*testEnv, *bytes.Buffer) {
	t.Helper()
	e := newTestEnv(t)
	logs := new(bytes.Buffer)
	srv := api.NewServer(e.svc, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e.ts = httptest.NewServer(srv)
	t.Cleanup(e.ts.Close)
	return e, logs
}

// A webhook's secret comes out once, in the create's answer, and never
// again: not in the list, the show, the deliveries, the test delivery,
// the audit log or a log line of the API layer
// (debug included). A URL to the loopback is a 400 naming url.
func TestWebhookSecretComesOutOnce(t *testing.T) {
	e, logs := newLoggedEnv(t)
	ws := "/api/v1/workspaces/default/webhooks"
	created := mustSend(t, e, e.admin, "POST", ws, `{"name":"ops","url":"https://203.0.113.7/hook","events":["job_failed","job_cancelled"]}`, http.StatusCreated)
	var c struct {
		Secret string   `json:"secret"`
		Name   string   `json:"name"`
		Events []string `json:"events"`
	}
	if err := json.Unmarshal(created.body, &c); err != nil || len(c.Secret) != 64 || c.Name != "ops" || strings.Join(c.Events, ",") != "job_failed,job_canceled" {
		t.Fatalf("create answered %s (%v)", created.body, err)
	}
	var seen strings.Builder
	seen.Write(mustSend(t, e, e.admin, "GET", ws, "", http.StatusOK).body)
	seen.Write(mustSend(t, e, e.admin, "GET", ws+"/OPS", "", http.StatusOK).body)
	seen.Write(mustSend(t, e, e.admin, "POST", ws+"/ops/test", "", http.StatusAccepted).body)
	deliveries := mustSend(t, e, e.admin, "GET", ws+"/ops/deliveries?limit=5", "", http.StatusOK)
	seen.Write(deliveries.body)
	if !strings.Contains(string(deliveries.body), `"event":"ping"`) {
		t.Errorf("deliveries %s lack the ping", deliveries.body)
	}
	bad := send(t, e, e.admin, "GET", ws+"/ops/deliveries?limit=x", "", nil)
	if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.body), `"target":"limit"`) {
		t.Errorf("limit=x: %s", bad)
	}
	for _, u := range []string{"https://127.0.0.1/h", "https://[::1]/h", "https://localhost/h", "https://169.254.169.254/h", "https://0.0.0.0/h"} {
		bad := send(t, e, e.admin, "POST", ws, `{"name":"evil","url":"`+u+`","events":["job_failed"]}`, nil)
		seen.Write(bad.body)
		if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.body), `"target":"url"`) {
			t.Errorf("%s: %s, want 400 naming url", u, bad)
		}
	}
	seen.Write(mustSend(t, e, e.admin, "GET", "/api/v1/audit", "", http.StatusOK).body)
	mustSend(t, e, e.admin, "DELETE", ws+"/ops", "", http.StatusNoContent)
	seen.Write(logs.Bytes())
	if strings.Contains(seen.String(), c.Secret) || strings.Contains(seen.String(), `"secret"`) {
		t.Errorf("the secret came out: %s", seen.String())
	}
}

package webhook_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/internal/testcli"
)

// `shoal webhook` end to end over the real API: create prints the secret
// once (and says to keep it), list and show never do, test queues a ping
// that deliveries lists, a loopback URL is refused naming url, delete
// removes it.
func TestWebhookCommands(t *testing.T) {
	testcli.Server(t, nil)
	out, errOut, code := testcli.Run(t, "webhook", "create", "--name", "ops", "--url", "https://203.0.113.7/hook",
		"--events", "job_failed,job_queued_too_long", "--description", "on-call", "-o", "json")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	var created struct {
		Secret string   `json:"secret"`
		Events []string `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(created.Secret) ||
		strings.Join(created.Events, ",") != "job_failed,job_queued_too_long" || !strings.Contains(errOut, "not shown again") {
		t.Fatalf("create printed %s / %s (%v)", out, errOut, err)
	}
	var seen strings.Builder
	for _, args := range [][]string{{"webhook", "list"}, {"webhook", "list", "-o", "json"}, {"webhook", "show", "-n", "ops", "-o", "yaml"}, {"webhook", "test", "-n", "ops"}} {
		out, errOut, code := testcli.Run(t, args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
		seen.WriteString(out + errOut)
	}
	if !strings.Contains(seen.String(), "ops") || !strings.Contains(seen.String(), created.Secret[:4]) {
		t.Errorf("list/show printed %s", seen.String())
	}
	if strings.Contains(seen.String(), created.Secret) {
		t.Errorf("the secret came out again: %s", seen.String())
	}
	out, errOut, code = testcli.Run(t, "webhook", "deliveries", "-n", "ops", "--limit", "5")
	if code != 0 || !strings.Contains(out, "ping") || !strings.Contains(out, "pending") || !strings.Contains(strings.ToUpper(out), "NEXT_ATTEMPT") {
		t.Errorf("deliveries: %d %s %s", code, out, errOut)
	}
	out, errOut, code = testcli.Run(t, "webhook", "create", "--name", "evil", "--url", "https://169.254.169.254/latest/meta-data/", "--events", "job_failed")
	if code == 0 || !strings.Contains(errOut, "url") || !strings.Contains(errOut, "link-local") {
		t.Errorf("metadata URL: %d %s %s", code, out, errOut)
	}
	out, errOut, code = testcli.Run(t, "webhook", "create", "--name", "mail", "--email", "oncall@example.com", "--events", "job_exploded")
	if code == 0 || !strings.Contains(errOut, "job_exploded") {
		t.Errorf("an unknown event: %d %s %s", code, out, errOut)
	}
	if out, errOut, code = testcli.Run(t, "webhook", "delete", "-n", "ops"); code != 0 || !strings.Contains(out, "deleted") {
		t.Errorf("delete: %d %s %s", code, out, errOut)
	}
	if _, errOut, code = testcli.Run(t, "webhook", "show", "-n", "ops"); code == 0 || !strings.Contains(errOut, "not in workspace") {
		t.Errorf("show after delete: %d %s", code, errOut)
	}
}

// A server whose config allows private URLs (SetWebhookPolicy) accepts a
// receiver on the loopback.
func TestWebhookCreateOnLoopbackWhenAllowed(t *testing.T) {
	testcli.Server(t, func(s *api.Server) { s.SetWebhookPolicy(true, true) })
	if out, errOut, code := testcli.Run(t, "webhook", "create", "--name", "lab", "--url", "http://127.0.0.1:9999/h", "--events", "job_failed"); code != 0 {
		t.Errorf("create on the loopback, allowed: %d %s %s", code, out, errOut)
	}
}

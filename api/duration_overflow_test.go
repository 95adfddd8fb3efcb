package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A number of minutes whose nanoseconds wrap an int64 is refused naming
// the field: 307445735 minutes used to wrap to a 26-second postponement.
func TestPostponeShutdownMinutesOverflow(t *testing.T) {
	ts, _, admin := newTestServer(t)
	for _, m := range []string{"307445735", "9223372036854775807", "10081"} {
		resp, body := do(t, ts, admin, http.MethodPost, "/api/v1/workspaces/default/computes/nope/postponeShutdown?minutes="+m, "", nil)
		if msg, _ := body["error"].(map[string]any)["message"].(string); resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "minutes") {
			t.Errorf("minutes=%s: %d %v; want 400 naming minutes", m, resp.StatusCode, body)
		}
	}
}

package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClientGoneIsNoServerError: a request whose client went away fails
// with the request context's error; that is the client's doing, so it is
// answered (for the metrics and the audit log) with 499, not 500, and not
// logged as an internal error. An internal error of a request whose
// client is still there still is both.
func TestClientGoneIsNoServerError(t *testing.T) {
	var logs bytes.Buffer
	s := Errors{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range []error{
		context.Canceled,
		fmt.Errorf("list jobs: %w", context.Canceled),
		errors.New("sql: interrupted"), // a driver's own words for the same
	} {
		logs.Reset()
		r := httptest.NewRequest("GET", "/api/v1/workspaces/default/jobs", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		s.Write(w, r, err)
		if w.Code != StatusClientClosedRequest {
			t.Errorf("%v after the client left: status %d, want %d", err, w.Code, StatusClientClosedRequest)
		}
		if strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("%v after the client left is logged as an error: %s", err, logs.String())
		}
	}

	logs.Reset()
	r := httptest.NewRequest("GET", "/api/v1/workspaces/default/jobs", nil)
	w := httptest.NewRecorder()
	s.Write(w, r, errors.New("disk on fire"))
	if w.Code != http.StatusInternalServerError || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("an internal error with the client there: %d, log %q; want 500 and an error log", w.Code, logs.String())
	}
}

package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// TestErrorsComeBackWithTheServersCode: what the server writes for an
// error (the envelope at StatusFor(code)) is read back as the same
// *shoal.Error, for every code; an answer whose code does not go with
// its status (a proxy, an older server) is read by its status alone.
func TestErrorsComeBackWithTheServersCode(t *testing.T) {
	codes := []string{
		core.ECONFLICT, core.EINTERNAL, core.EINVALID, core.ENOTFOUND, core.EUNAUTHORIZED, core.EFORBIDDEN,
		core.EQUOTA, core.EPRECONDITION, core.ENOTIMPLEMENTED, core.EUNAVAILABLE, core.ESTORAGEFULL,
	}
	for _, code := range codes {
		c := serve(t, client.StatusFor(code), client.ErrorBody{Error: client.ErrorDetail{Code: code, Message: "said " + code, Target: "name"}})
		_, err := c.GetCompute(context.Background(), "default", "cpu")
		if core.ErrorCode(err) != code || core.ErrorMessage(err) != "said "+code || core.ErrorField(err) != "name" {
			t.Errorf("%s at %d: got %#v", code, client.StatusFor(code), err)
		}
	}

	c := serve(t, http.StatusBadRequest, client.ErrorBody{Error: client.ErrorDetail{Code: core.ENOTFOUND, Message: "odd"}})
	if _, err := c.GetCompute(context.Background(), "default", "cpu"); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("not_found at 400: got %v, want the status's code invalid", err)
	}
	c = serve(t, http.StatusBadGateway, "<html>bad gateway</html>")
	if _, err := c.GetCompute(context.Background(), "default", "cpu"); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("a proxy's 502 page: got %v, want unavailable", err)
	}
}

// serve answers every request with status and body (JSON unless a string).
func serve(t *testing.T, status int, body any) *client.Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		if s, ok := body.(string); ok {
			_, _ = w.Write([]byte(s))
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(ts.Close)
	return client.NewClient(ts.URL, "token")
}

package idle

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeJupyter answers like Jupyter Notebook 6 under base_url /p/.
func fakeJupyter(t *testing.T, routes map[string]func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != "token s3cret" {
			http.Error(w, `{"message": "Forbidden", "reason": null}`, http.StatusForbidden)
			return
		}
		h, ok := routes[r.URL.Path]
		if !ok {
			http.Error(w, "<html>404: Not Found</html>", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		h(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func body(s string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { _, _ = w.Write([]byte(s)) }
}

func TestJupyterParsesListings(t *testing.T) {
	srv := fakeJupyter(t, map[string]func(http.ResponseWriter){
		"/p/api/kernels": body(`[{"id": "afca3ccf", "name": "python3", "last_activity": "2026-11-22T21:21:36.427705Z", "execution_state": "busy", "connections": 2},
			{"id": "b2", "name": "ir", "last_activity": "2026-11-22T21:00:00+01:00", "execution_state": "idle", "connections": 0}]`),
		"/p/api/terminals": body(`[{"name": "1", "last_activity": "2026-11-22T21:21:36.449976Z"}]`),
	})
	for _, base := range []string{srv.URL + "/p/", srv.URL + "/p"} {
		j := &Jupyter{BaseURL: base, Token: "s3cret"}
		ks, err := j.Kernels(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []Kernel{
			{ID: "afca3ccf", Name: "python3", ExecutionState: "busy", Connections: 2, LastActivity: time.Date(2026, 11, 22, 21, 21, 36, 427705000, time.UTC)},
			{ID: "b2", Name: "ir", ExecutionState: "idle", LastActivity: time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)},
		}
		if len(ks) != 2 || ks[0] != want[0] || ks[1] != want[1] {
			t.Errorf("Kernels (base %s)\n got %+v\nwant %+v", base, ks, want)
		}
		ts, err := j.Terminals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 1 || ts[0].Name != "1" || !ts[0].LastActivity.Equal(time.Date(2026, 11, 22, 21, 21, 36, 449976000, time.UTC)) {
			t.Errorf("Terminals: %+v", ts)
		}
	}
}

func TestJupyterErrors(t *testing.T) {
	srv := fakeJupyter(t, map[string]func(http.ResponseWriter){
		"/p/api/kernels":       body(`[{"id": "k", "name": "python3", "last_activity": "yesterday"}]`),
		"/bad/api/kernels":     func(w http.ResponseWriter) { http.Error(w, "kaput", http.StatusInternalServerError) },
		"/json/api/kernels":    body(`{"not": "a list"`),
		"/empty/api/kernels":   body(`[]`),
		"/empty/api/terminals": body(`[]`),
	})
	ctx := context.Background()
	cases := []struct {
		name string
		j    *Jupyter
		call func(*Jupyter) error
		want string
	}{
		{"wrong token", &Jupyter{BaseURL: srv.URL + "/empty/", Token: "nope"}, kernels, "403 Forbidden: the token was refused"},
		{"wrong base_url", &Jupyter{BaseURL: srv.URL + "/other/", Token: "s3cret"}, kernels, "404 Not Found: is BaseURL the server's base_url?"},
		{"server error", &Jupyter{BaseURL: srv.URL + "/bad/", Token: "s3cret"}, kernels, "500 Internal Server Error: kaput"},
		{"bad JSON", &Jupyter{BaseURL: srv.URL + "/json/", Token: "s3cret"}, kernels, "not the expected JSON"},
		{"bad time", &Jupyter{BaseURL: srv.URL + "/p/", Token: "s3cret"}, kernels, `kernel k: last_activity "yesterday" is not an RFC 3339 time`},
		{"no base URL", &Jupyter{}, kernels, "no BaseURL"},
		{"unreachable", &Jupyter{BaseURL: "http://127.0.0.1:1/", HTTP: &http.Client{Timeout: 5 * time.Second}}, kernels, "GET http://127.0.0.1:1/api/kernels"},
	}
	for _, c := range cases {
		err := c.call(c.j)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the token: %v", c.name, err)
		}
	}
	// No terminals API: a distinct error, and no list.
	ts, err := (&Jupyter{BaseURL: srv.URL + "/p/", Token: "s3cret"}).Terminals(ctx)
	if !errors.Is(err, ErrTerminalsUnavailable) || ts != nil {
		t.Errorf("terminals 404: %v, %v; want ErrTerminalsUnavailable", ts, err)
	}
	// Empty lists are lists, not errors.
	j := &Jupyter{BaseURL: srv.URL + "/empty/", Token: "s3cret"}
	if ks, err := j.Kernels(ctx); err != nil || ks == nil || len(ks) != 0 {
		t.Errorf("no kernels: %#v, %v", ks, err)
	}
	if ts, err := j.Terminals(ctx); err != nil || ts == nil || len(ts) != 0 {
		t.Errorf("no terminals: %#v, %v", ts, err)
	}
	// A canceled context stops the call.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := j.Kernels(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func kernels(j *Jupyter) error {
	_, err := j.Kernels(context.Background())
	return err
}

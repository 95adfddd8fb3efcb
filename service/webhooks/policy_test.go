package webhooks_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/teststorage"
	"github.com/shoal-ml/shoal/service/webhooks"
)

// The sender's client refuses, at connect time, the loopback and the
// metadata address (by address or by the name localhost), follows no
// redirect (a receiver on an allowed address that redirects to the
// loopback gets its 3xx back, and the loopback is never asked), and takes
// no proxy from the environment; with the config's allow_private it
// reaches a receiver on the loopback.
func TestClientRefusesTheServerAtConnectTime(t *testing.T) {
	var loopbackHits atomic.Int32
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loopbackHits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer loop.Close()
	_, port, _ := net.SplitHostPort(loop.Listener.Addr().String())

	// A receiver on the host's own (non-loopback) address that
	// redirects to the loopback receiver.
	ip := teststorage.RequireHostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	redirector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+"/stolen", http.StatusTemporaryRedirect)
	}))
	redirector.Listener.Close()
	redirector.Listener = l
	redirector.Start()
	defer redirector.Close()

	t.Setenv("HTTP_PROXY", redirector.URL)
	t.Setenv("http_proxy", redirector.URL)
	c := webhooks.NewHTTPClient(false, 5*time.Second)
	for _, u := range []string{loop.URL, "http://localhost:" + port, "http://[::1]:" + port, "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0:" + port} {
		resp, err := c.Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("POST %s: %s, want refused at connect time", u, resp.Status)
		} else if !strings.Contains(err.Error(), "refused") {
			t.Errorf("POST %s: %v, want the guard's refusal", u, err)
		}
	}
	resp, err := c.Post(redirector.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != loop.URL+"/stolen" {
		t.Errorf("a redirect: %s %s, want the 307 itself", resp.Status, resp.Header.Get("Location"))
	}
	if n := loopbackHits.Load(); n != 0 {
		t.Errorf("the loopback receiver was reached %d times", n)
	}

	open := webhooks.NewHTTPClient(true, 5*time.Second)
	resp, err = open.Post(loop.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("with allow_private: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || loopbackHits.Load() != 1 {
		t.Errorf("with allow_private: %s, hits %d", resp.Status, loopbackHits.Load())
	}
}

package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/domain/identity"
)

// shortLimits are DefaultLimits with timeouts short enough for a test.
func shortLimits() api.Limits {
	l := api.DefaultLimits()
	l.ReadHeaderTimeout, l.ReadTimeout, l.IdleTimeout = 300*time.Millisecond, 600*time.Millisecond, 600*time.Millisecond
	return l
}

// limitedServer serves e's API through api.NewHTTPServer with l, and
// sets e's server's caps to l's.
func limitedServer(t *testing.T, e *testEnv, l api.Limits) *httptest.Server {
	t.Helper()
	e.srv.SetLimits(l)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = api.NewHTTPServer(e.srv, l)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// dribble writes s a byte at a time, every gap, and reports whether the
// server closed the connection within limit.
func dribble(t *testing.T, conn net.Conn, s string, gap, limit time.Duration) (cut bool, after time.Duration) {
	t.Helper()
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes
		close(closed)
	}()
	for i := 0; time.Since(start) < limit; i++ {
		select {
		case <-closed:
			return true, time.Since(start)
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte{s[i%len(s)]}); err != nil {
			return true, time.Since(start)
		}
	}
	return false, time.Since(start)
}

func TestDefaultLimitsBoundEveryConnection(t *testing.T) {
	l := api.DefaultLimits()
	srv := api.NewHTTPServer(http.NotFoundHandler(), l)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 ||
		l.MaxStreamsPerPrincipal <= 0 || l.MaxAppStreamsPerPrincipal <= 0 || l.MaxAnonymous <= 0 ||
		l.MaxAnonymousPerSource <= 0 || l.MaxAnonymousPerSource >= l.MaxAnonymous || l.AnonymousTimeout <= 0 ||
		l.AnonymousTimeout >= l.ReadTimeout || l.MaxTransfersPerPrincipal <= 0 || l.TransferStallTimeout <= 0 {
		t.Fatalf("the server's limits %+v leave something unbounded", l)
	}
}

// A slowloris client sending its headers a byte at a time is cut off, and
// so is one dribbling a body.
func TestSlowClientsAreCutOff(t *testing.T) {
	e := newTestEnv(t)
	ts := limitedServer(t, e, shortLimits())
	addr := ts.Listener.Addr().String()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	if cut, after := dribble(t, conn, "X-Slow: aaaaaaaa\r\n", 50*time.Millisecond, 5*time.Second); !cut {
		t.Errorf("headers sent a byte at a time: the connection was still open after %v", after)
	}

	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", e.admin)
	if cut, after := dribble(t, conn2, `{"name":"slow"}`, 50*time.Millisecond, 5*time.Second); !cut {
		t.Errorf("a body sent a byte at a time: the connection was still open after %v", after)
	}

	// An authenticated upload may take longer than the read timeout.
	conn4, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn4.Close()
	payload := strings.Repeat("x", 30)
	fmt.Fprintf(conn4, "POST /api/v1/workspaces/default/artifacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", e.admin, len(payload))
	for i := range len(payload) {
		time.Sleep(50 * time.Millisecond) // 1.5 s in all, past the 0.6 s read timeout
		if _, err := conn4.Write([]byte{payload[i]}); err != nil {
			t.Fatalf("a slow authenticated upload was cut off after %d bytes: %v", i, err)
		}
	}
	resp4, err := http.ReadResponse(bufio.NewReader(conn4), nil)
	if err != nil || resp4.StatusCode != http.StatusCreated {
		t.Fatalf("a slow authenticated upload: %v %v", resp4, err)
	}

	// An idle keep-alive connection is closed too.
	conn3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn3.Close()
	io.WriteString(conn3, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn3), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	conn3.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, conn3); err != nil {
		t.Errorf("an idle keep-alive connection was not closed: %v", err)
	}
}

// Log follows are bounded per principal, and last past the read timeout.
func TestLogFollowsAreCappedPerPrincipal(t *testing.T) {
	e := newTestEnv(t)
	l := shortLimits()
	l.MaxStreamsPerPrincipal = 2
	e.srv.SetLimits(l)
	ts := limitedServer(t, e, l)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", fmt.Sprintf(computeDoc, "cpu"), http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/jobs", jobDoc("followed"), http.StatusCreated)
	bob := addUser(t, e, "bob", identity.RoleReader)
	follow := func(ctx context.Context, token string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/workspaces/default/jobs/followed/logs?follow=true", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultClient.Do(req)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var open []*http.Response
	for i := 0; i < 2; i++ {
		resp, err := follow(ctx, e.admin)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("follow %d: %v %v", i, resp, err)
		}
		open = append(open, resp)
	}
	resp, err := follow(context.Background(), e.admin)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "at most 2 at a time per caller") {
		t.Fatalf("a third follow: %d %s; want 429 naming the cap", resp.StatusCode, body)
	}
	// Another principal has streams of its own.
	bctx, bcancel := context.WithCancel(context.Background())
	resp, err = follow(bctx, bob)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bob's follow: %v %v", resp, err)
	}
	bcancel()
	resp.Body.Close()
	// A follow outlives the read timeout: it is still open.
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, open[0].Body); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("a follow ended after the read timeout: %v", err)
	case <-time.After(3 * l.ReadTimeout):
	}
	cancel()
	for _, r := range open {
		r.Body.Close()
	}
	// Once they end, the slots are free again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := follow(context.Background(), e.admin)
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended follows' slots were not freed: %v %v", r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Requests without a credential share a bounded number of slots; those
// with one do not count against it.
func TestUnauthenticatedRequestsAreCapped(t *testing.T) {
	e := newTestEnv(t)
	l := api.DefaultLimits()
	l.MaxAnonymous = 1
	e.srv.SetLimits(l)
	release, entered := make(chan struct{}), make(chan struct{})
	e.srv.Mount("GET /test-hold", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.Get(e.ts.URL + "/test-hold"); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	resp, err := http.Get(e.ts.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a request without a credential past the cap: %d", resp.StatusCode)
	}
	if resp, body := do(t, e.ts, e.admin, "GET", "/api/v1/whoami", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("an authenticated request while the unauthenticated slots are taken: %d %v", resp.StatusCode, body)
	}
	close(release)
	<-done
	if resp, err := http.Get(e.ts.URL + "/api/v1/openapi.json"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a request without a credential once the slot is free: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

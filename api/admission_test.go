package api_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/api/websession"
)

// anonymousHolds mounts GET /test-hold, a handler that needs no
// credential and stays until release; and GET /test-page, a studio-like
// page that says who its caller is.
type anonymousHolds struct {
	e       *testEnv
	entered chan struct{}
	release chan struct{}
	wg      sync.WaitGroup
}

func newAnonymousHolds(t *testing.T, e *testEnv) *anonymousHolds {
	h := &anonymousHolds{e: e, entered: make(chan struct{}, 64), release: make(chan struct{})}
	e.srv.Mount("GET /test-hold", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.entered <- struct{}{}
		<-h.release
	}))
	e.srv.Mount("GET /test-page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, err := e.srv.Principal(r); err == nil {
			fmt.Fprint(w, p.Name)
			return
		}
		fmt.Fprint(w, "sign in")
	}))
	t.Cleanup(h.end)
	return h
}

func (h *anonymousHolds) end() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
	h.wg.Wait()
}

// hold sends a request from remote that stays in the server until end.
func (h *anonymousHolds) hold(t *testing.T, remote string) {
	t.Helper()
	h.wg.Add(1)
	done := make(chan int, 1)
	go func() {
		defer h.wg.Done()
		done <- serveFrom(h.e, remote, "GET", "/test-hold", nil).Code
	}()
	select {
	case <-h.entered:
	case code := <-done:
		t.Fatalf("a held request from %s was answered %d", remote, code)
	case <-time.After(5 * time.Second):
		t.Fatalf("a held request from %s did not start", remote)
	}
}

// serveFrom serves one request as if sent from remote (host:port).
func serveFrom(e *testEnv, remote, method, path string, hdr http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// One source cannot take every slot of the unauthenticated share: it
// gets its own share within it (an IPv6 /64 is one source), others go on
// being served, and health checks and authenticated callers are never
// refused for it.
func TestOneSourceCannotTakeEveryAnonymousSlot(t *testing.T) {
	e := newTestEnv(t)
	l := api.DefaultLimits()
	l.MaxAnonymous, l.MaxAnonymousPerSource = 4, 2
	e.srv.SetLimits(l)
	h := newAnonymousHolds(t, e)

	h.hold(t, "192.0.2.1:1000")
	h.hold(t, "192.0.2.1:1001")
	if rec := serveFrom(e, "192.0.2.1:1002", "GET", "/.well-known/jwks.json", nil); rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(rec.Body.String(), "at most 2 at a time from one address") {
		t.Fatalf("a third request from a source holding its share: %d %s; want 429 naming the per-address cap", rec.Code, rec.Body)
	}
	if rec := serveFrom(e, "192.0.2.2:1000", "GET", "/.well-known/jwks.json", nil); rec.Code != http.StatusOK {
		t.Fatalf("another source, while the first holds its share: %d %s", rec.Code, rec.Body)
	}

	// An IPv6 /64 is one source.
	h.hold(t, "[2001:db8:1:2::1]:1000")
	h.hold(t, "[2001:db8:1:2::2]:1000")
	if rec := serveFrom(e, "[2001:db8:1:2::3]:1000", "GET", "/.well-known/jwks.json", nil); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a third request from one IPv6 /64: %d; want 429", rec.Code)
	}

	// All 4 slots are taken now.
	if rec := serveFrom(e, "192.0.2.3:1000", "GET", "/.well-known/jwks.json", nil); rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(rec.Body.String(), "at most 4") {
		t.Fatalf("a request without a credential while every slot is taken: %d %s; want 429 naming the cap", rec.Code, rec.Body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if rec := serveFrom(e, "192.0.2.3:1000", "GET", path, nil); rec.Code != http.StatusOK {
			t.Errorf("%s while every unauthenticated slot is taken: %d %s", path, rec.Code, rec.Body)
		}
	}
	bearer := http.Header{"Authorization": {"Bearer " + e.admin}}
	if rec := serveFrom(e, "192.0.2.3:1000", "GET", "/api/v1/whoami", bearer); rec.Code != http.StatusOK {
		t.Errorf("an authenticated request while every unauthenticated slot is taken: %d %s", rec.Code, rec.Body)
	}
	h.end()
	if rec := serveFrom(e, "192.0.2.1:1003", "GET", "/.well-known/jwks.json", nil); rec.Code != http.StatusOK {
		t.Errorf("once the held requests end: %d %s", rec.Code, rec.Body)
	}
}

// A request counts as authenticated only once its credential has
// authenticated: the session cookie under its real name (__Host- under
// HTTPS) does, a made-up header or cookie does not, and a public route
// always counts against the unauthenticated share.
func TestOnlyAuthenticatedRequestsSkipTheAnonymousCap(t *testing.T) {
	e := newTestEnv(t)
	e.srv.SetSecure(true)
	l := api.DefaultLimits()
	l.MaxAnonymous, l.MaxAnonymousPerSource = 1, 1
	e.srv.SetLimits(l)
	h := newAnonymousHolds(t, e)
	h.hold(t, "192.0.2.9:1000")

	const from = "192.0.2.1:1000"
	session := http.Header{"Cookie": {websession.CookieName(websession.SessionCookie, true) + "=" + e.admin}}
	if rec := serveFrom(e, from, "GET", "/test-page", session); rec.Code != http.StatusOK || rec.Body.String() != "admin" {
		t.Errorf("a studio page with a valid __Host- session cookie while the unauthenticated slots are taken: %d %s", rec.Code, rec.Body)
	}
	refused := []struct {
		what, method, path string
		hdr                http.Header
	}{
		{"a public route with a made-up Authorization header", "GET", "/.well-known/jwks.json", http.Header{"Authorization": {"x"}}},
		{"a public route with a valid token", "GET", "/.well-known/openid-configuration", http.Header{"Authorization": {"Bearer " + e.admin}}},
		{"the token endpoint with a made-up header", "POST", "/adfs/oauth2/token", http.Header{"Authorization": {"x"}}},
		{"a studio page with a made-up cookie of the plain name", "GET", "/test-page", http.Header{"Cookie": {"shoal_session=x"}}},
		{"a studio page with a valid token in the plain-named cookie under HTTPS", "GET", "/test-page", http.Header{"Cookie": {"shoal_session=" + e.admin}}},
		{"a studio page with a made-up __Host- cookie", "GET", "/test-page", http.Header{"Cookie": {"__Host-shoal_session=x"}}},
		{"an API route with a made-up token", "GET", "/api/v1/whoami", http.Header{"Authorization": {"Bearer shoal_made-up"}}},
		{"an agent route with a made-up node credential", "POST", "/agent/v1/sync", http.Header{"Authorization": {"Bearer made-up"}}},
	}
	for _, c := range refused {
		if rec := serveFrom(e, from, c.method, c.path, c.hdr); rec.Code != http.StatusTooManyRequests {
			t.Errorf("%s while the unauthenticated slots are taken: %d %s; want 429", c.what, rec.Code, rec.Body)
		}
	}
	h.end()
	if rec := serveFrom(e, from, "GET", "/api/v1/whoami", http.Header{"Authorization": {"Bearer shoal_made-up"}}); rec.Code != http.StatusUnauthorized {
		t.Errorf("a made-up token once a slot is free: %d %s; want 401", rec.Code, rec.Body)
	}
}

// A request that has not authenticated gets a short time for its whole
// body: a body dribbled a byte at a time is cut long before ReadTimeout;
// once authenticated, the request has ReadTimeout.
func TestUnauthenticatedBodiesHaveAShortDeadline(t *testing.T) {
	e := newTestEnv(t)
	l := api.DefaultLimits()
	l.ReadTimeout, l.AnonymousTimeout = 20*time.Second, 300*time.Millisecond
	ts := limitedServer(t, e, l)
	for _, c := range []struct{ what, head string }{
		{"the token endpoint", "POST /adfs/oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"},
		{"an API route with a made-up token", "POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer shoal_made-up\r\n"},
		{"an API route with a made-up session cookie", "POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nCookie: shoal_session=x\r\n"},
	} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "%sContent-Length: 100000\r\n\r\n", c.head)
		if cut, after := dribble(t, conn, "grant_type=client_credentials&", 50*time.Millisecond, 4*time.Second); !cut {
			t.Errorf("%s, body dribbled: the connection was still open after %v", c.what, after)
		}
		conn.Close()
	}

	// An authenticated body may take longer than the unauthenticated deadline.
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"slow-ws"}`
	fmt.Fprintf(conn, "POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", e.admin, len(body))
	for i := range len(body) {
		time.Sleep(50 * time.Millisecond) // 0.9 s in all, past the 0.3 s
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			t.Fatalf("an authenticated body was cut off after %d bytes: %v", i, err)
		}
	}
	if resp := readResponse(t, conn); resp.StatusCode != http.StatusCreated {
		t.Fatalf("an authenticated slow body: %d", resp.StatusCode)
	}
}

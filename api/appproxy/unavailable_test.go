package appproxy

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/computes"
)

// An application that does not answer (nothing listens on its port yet)
// is a 502 whose body says why and to try again; the server's log gets
// the same cause beside the application's name, since a 502 in the
// request log alone tells an operator nothing.
func TestUnansweringAppIs502WithItsCauseLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	var logged bytes.Buffer
	p := &Proxy{
		Errors: httpx.Errors{Log: slog.New(slog.NewTextHandler(&logged, nil))},
		Stream: func(_ http.ResponseWriter, _ *identity.Principal, _ string, serve func()) { serve() },
	}
	target := &computes.InstanceAppTarget{Addr: addr, BasePath: "/apps/x/", Mark: []string{"SHOAL_TEST_MARK=unused"}}
	w := httptest.NewRecorder()
	p.serve(w, httptest.NewRequest("GET", "/apps/x/api", nil), target, "application x of compute instance i", "", "requests to instance applications")
	if w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), "does not answer yet") || !strings.Contains(w.Body.String(), "nothing listens on the port") {
		t.Fatalf("got %d %s; want 502 saying nothing listens yet", w.Code, w.Body)
	}
	if !strings.Contains(logged.String(), "application did not answer") || !strings.Contains(logged.String(), "application x of compute instance i") || !strings.Contains(logged.String(), "nothing listens on the port") {
		t.Fatalf("log %q; want the cause beside the application's name", logged.String())
	}
}

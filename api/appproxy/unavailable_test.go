package appproxy

import (
	"context"
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
// is a 502 whose body says why and to try again, and the same words are
// noted for the server's request log (httpx.FailureNote), since a 502 in
// that log alone tells an operator nothing.
func TestUnansweringAppIs502WithItsCauseNoted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	p := &Proxy{
		Errors: httpx.Errors{Log: slog.New(slog.DiscardHandler)},
		Stream: func(_ http.ResponseWriter, _ *identity.Principal, _ string, serve func()) { serve() },
	}
	target := &computes.InstanceAppTarget{Addr: addr, BasePath: "/apps/x/", Mark: []string{"SHOAL_TEST_MARK=unused"}}
	ctx, note := httpx.NoteFailures(context.Background())
	w := httptest.NewRecorder()
	p.serve(w, httptest.NewRequest("GET", "/apps/x/api", nil).WithContext(ctx), target, "application x of compute instance i", "", "requests to instance applications")
	if w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), "does not answer yet") || !strings.Contains(w.Body.String(), "nothing listens on the port") {
		t.Fatalf("got %d %s; want 502 saying nothing listens yet", w.Code, w.Body)
	}
	if got := note.Message(); !strings.Contains(got, "application x of compute instance i") || !strings.Contains(got, "nothing listens on the port") {
		t.Fatalf("noted %q; want the cause beside the application's name", got)
	}
}

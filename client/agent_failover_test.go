package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// An agent's client whose server stops answering moves to the next one
// its answers listed, at the call after the failure; an error answer
// (the server is there) moves nothing.
func TestAgentClientMovesToAnotherServer(t *testing.T) {
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") == "1ms" {
			http.Error(w, `{"error":{"code":"Conflict","message":"no"}}`, http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"lease_expires":"2026-11-26T00:00:00Z","servers":["` + "http://" + r.Host + `"]}`))
	}))
	defer alive.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	a := NewAgentClient(deadURL, "tok")
	a.SetServers([]string{alive.URL, deadURL, alive.URL + "/"})
	if got := a.Servers(); !slices.Equal(got, []string{deadURL, alive.URL}) {
		t.Fatalf("servers %v: want the one in use first, then the others once each", got)
	}
	var moves [][2]string
	a.OnMove = func(from, to string, err error) { moves = append(moves, [2]string{from, to}) }
	ctx := context.Background()
	if _, err := a.Sync(ctx, &node.AgentSyncRequest{}, time.Second); err == nil {
		t.Fatal("a sync to a closed server succeeded")
	}
	if len(moves) != 1 || moves[0] != [2]string{deadURL, alive.URL} {
		t.Fatalf("moves %v, want one from the dead server to the live one", moves)
	}
	if _, err := a.Sync(ctx, &node.AgentSyncRequest{}, time.Second); err != nil {
		t.Fatalf("the next sync, on the live server: %v", err)
	}
	// An error answer: the server is there; nothing moves.
	if _, err := a.Sync(ctx, &node.AgentSyncRequest{}, time.Millisecond); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("an error answer: %v", err)
	}
	if len(moves) != 1 || a.Servers()[0] != alive.URL {
		t.Errorf("moves %v, in use %s: an error answer moved the client", moves, a.Servers()[0])
	}
	// A canceled call says nothing of the server.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = a.Sync(cctx, &node.AgentSyncRequest{}, time.Second)
	if len(moves) != 1 {
		t.Errorf("a canceled call moved the client: %v", moves)
	}
}

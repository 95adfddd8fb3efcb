package files

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
)

// A rank's log past its cap is cut on the node: the file keeps the first
// max bytes and one marker line however much more the job writes (as it
// appends, O_APPEND, while the shipper polls), and only that is shipped.
func TestLogShipperCutsAtTheCap(t *testing.T) {
	var mu sync.Mutex
	stored := map[int64]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		off, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
		mu.Lock()
		stored[off] = string(b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "std_log.txt")
	job, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	const limit = 64
	l := NewLogShipper(client.NewAgentClient(srv.URL, "tok"), node.RankRef{AttemptID: "att-1"}, path)
	l.Max = limit
	marker := money.LogCutMarker(limit)
	for i := range 50 {
		job.WriteString(strings.Repeat(strconv.Itoa(i%10), 20) + "\n")
		if err := l.ShipAll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	if int64(len(b)) != limit+int64(len(marker)) || !strings.HasSuffix(string(b), marker) || strings.Count(string(b), "[shoal: log cut") != 1 {
		t.Fatalf("the node's log (%d bytes): %q", len(b), b)
	}
	// What reached the server is the same: the first 64 bytes, the marker.
	mu.Lock()
	defer mu.Unlock()
	var got strings.Builder
	for off := int64(0); off < int64(len(b)); {
		s, ok := stored[off]
		if !ok {
			t.Fatalf("nothing shipped at %d: %v", off, stored)
		}
		got.WriteString(s)
		off += int64(len(s))
	}
	if got.String() != string(b) {
		t.Errorf("shipped %q, want %q", got.String(), b)
	}
	if l.Offset != int64(len(b)) {
		t.Errorf("offset %d", l.Offset)
	}
}

package files

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/node"
)

// A log ships in chunks at their offsets; what is appended while a poll
// ships goes with the next poll, in full-sized chunks (not in chunks the
// size of the little the poll first saw).
func TestLogShipperChunks(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	var chunks []int
	path := filepath.Join(t.TempDir(), "user.log")
	want := bytes.Repeat([]byte("0123456789abcdef"), (LogChunk*5/2)/16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		off, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || off != int64(len(got)) {
			http.Error(w, "offset "+r.URL.Query().Get("offset")+" after "+strconv.Itoa(len(got)), http.StatusBadRequest)
			return
		}
		got = append(got, b...)
		chunks = append(chunks, len(b))
		if len(got) == 200 {
			// The job writes two and a half chunks while the second
			// poll ships its 100 bytes.
			if err := os.WriteFile(path, want, 0o600); err != nil {
				t.Error(err)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	if err := os.WriteFile(path, want[:100], 0o600); err != nil {
		t.Fatal(err)
	}
	l := NewLogShipper(client.NewAgentClient(srv.URL, "tok"), node.RankRef{AttemptID: "att-1", Rank: 0}, path)
	if err := l.ShipAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, want[:200], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.ShipAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.ShipAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got, want) {
		t.Fatalf("shipped %d bytes, want the %d written", len(got), len(want))
	}
	if len(chunks) != 5 || chunks[0] != 100 || chunks[1] != 100 || chunks[2] != LogChunk || chunks[3] != LogChunk {
		t.Errorf("chunks %v, want 100, 100, then full chunks of %d", chunks, LogChunk)
	}
}

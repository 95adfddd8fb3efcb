package api_test

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/domain/identity"
)

// readResponse reads one response from conn, within 5 s.
func readResponse(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

// startUpload opens an artifact upload of size bytes as token and sends
// its first sent bytes.
func startUpload(t *testing.T, addr, token string, size, sent int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /api/v1/workspaces/default/artifacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", token, size, strings.Repeat("x", sent))
	return conn
}

// One principal's concurrent uploads are capped; another principal has
// its own, and a slot is free again once its upload ends.
func TestUploadsAreCappedPerPrincipal(t *testing.T) {
	e := newTestEnv(t)
	l := api.DefaultLimits()
	l.MaxTransfersPerPrincipal = 2
	ts := limitedServer(t, e, l)
	addr := ts.Listener.Addr().String()
	bob := addUser(t, e, "bob", identity.RoleContributor)

	first := startUpload(t, addr, e.admin, 1000, 10)
	startUpload(t, addr, e.admin, 1000, 10)
	time.Sleep(300 * time.Millisecond) // both are in their handlers, reading
	third := startUpload(t, addr, e.admin, 1000, 10)
	resp := readResponse(t, third)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "at most 2 at a time per caller") {
		t.Fatalf("a third upload at once: %d %s; want 429 naming the cap", resp.StatusCode, body)
	}
	if r := send(t, e, bob, "POST", "/api/v1/workspaces/default/artifacts", "bob's", nil); r.status != http.StatusCreated {
		t.Fatalf("another principal's upload: %s", r)
	}
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := send(t, e, e.admin, "POST", "/api/v1/workspaces/default/artifacts", "after", nil)
		if r.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended upload's slot was not freed: %s", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An upload that stops sending is cut after the stall timeout, however
// long the read timeout; one that keeps moving goes on past both.
func TestStalledUploadsAreCut(t *testing.T) {
	e := newTestEnv(t)
	l := shortLimits()
	l.TransferStallTimeout = 400 * time.Millisecond
	ts := limitedServer(t, e, l)
	addr := ts.Listener.Addr().String()

	stalled := startUpload(t, addr, e.admin, 1000, 10)
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stalled)
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(4 * time.Second):
		t.Fatalf("an upload that stopped sending was still open after 4 s")
	}

	payload := strings.Repeat("y", 25)
	moving := startUpload(t, addr, e.admin, len(payload), 0)
	for i := range len(payload) {
		time.Sleep(100 * time.Millisecond) // 2.5 s in all, past the read and stall timeouts
		if _, err := moving.Write([]byte{payload[i]}); err != nil {
			t.Fatalf("a slow but moving upload was cut off after %d bytes: %v", i, err)
		}
	}
	if resp := readResponse(t, moving); resp.StatusCode != http.StatusCreated {
		t.Fatalf("a slow but moving upload: %d", resp.StatusCode)
	}
}

// A download whose reader stops reading is cut after the stall timeout,
// and downloads count against the caller's transfers.
func TestStalledDownloadsAreCut(t *testing.T) {
	e := newTestEnv(t)
	runJob(t, e, "big")
	const size = 48 << 20 // far more than the sockets' buffers hold
	if err := e.files.PutOutputs("default", "big", 1, 0, io.LimitReader(rand.Reader, size), size+1); err != nil {
		t.Fatal(err)
	}
	l := api.DefaultLimits()
	l.TransferStallTimeout, l.MaxTransfersPerPrincipal = 400*time.Millisecond, 1
	ts := limitedServer(t, e, l)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/workspaces/default/jobs/big/outputs?rank=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", e.admin)
	time.Sleep(300 * time.Millisecond) // the download has started, and fills the buffers
	if r := send(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/big/outputs?rank=0", "", nil); r.status != http.StatusTooManyRequests {
		t.Errorf("a second download at once with a cap of 1: %d; want 429", r.status)
	}
	time.Sleep(2 * time.Second) // the reader stalls, past the stall timeout
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := io.Copy(io.Discard, conn)
	if n >= size {
		t.Fatalf("a download whose reader stalled for 2 s was not cut (%d bytes read)", n)
	}
}

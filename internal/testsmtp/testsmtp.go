// Package testsmtp starts a real SMTP server for tests: Debian's aiosmtpd
// (python3-aiosmtpd) on a private port, which reports every message it
// receives.
package testsmtp

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

//go:embed smtpd.py
var script []byte

// Message is one mail the server received.
type Message struct {
	From string   `json:"from"`
	To   []string `json:"to"`
	// Data is the whole message, headers and body.
	Data string `json:"data"`
}

// Server is a running aiosmtpd.
type Server struct {
	Host string
	Port int
	msgs chan Message
}

// Start runs aiosmtpd on 127.0.0.1 until the test ends.
func Start(t *testing.T) *Server {
	t.Helper()
	py := testenv.Python3(t)
	testenv.Require(t, "Debian's aiosmtpd (a real SMTP server for the mail tests)", func() error {
		return exec.Command(py, "-c", "import aiosmtpd").Run()
	}, "apt-get install python3-aiosmtpd")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	path := filepath.Join(t.TempDir(), "smtpd.py")
	if err := os.WriteFile(path, script, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, path, strconv.Itoa(port))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	s := &Server{Host: "127.0.0.1", Port: port, msgs: make(chan Message, 100)}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() || sc.Text() != "READY" {
		t.Fatalf("aiosmtpd did not start: %q %v", sc.Text(), sc.Err())
	}
	go func() {
		for sc.Scan() {
			var m Message
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.msgs <- m
			}
		}
		close(s.msgs)
	}()
	return s
}

// Next returns the next message received, failing the test when none
// arrives within wait (a bound on a broken test, not a timing).
func (s *Server) Next(t *testing.T, wait time.Duration) Message {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			t.Fatal("aiosmtpd exited")
		}
		return m
	case <-time.After(wait):
		t.Fatalf("no mail reached aiosmtpd within %s", wait)
	}
	return Message{}
}

package files

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/node"
)

// logServer records, in order, what an agent sends when it delivers a
// result: "logs@OFFSET" for an upload and "status" or "status+log@OFFSET"
// for a report. refuseLog answers a report that carries a log as a
// server that does not know the field does (400, unknown key). This
// stands in for the server at the edge of the agent's package; the real
// server's side is api's TestFinalReportCarriesTheEndOfTheLog.
type logServer struct {
	mu        sync.Mutex
	seen      []string
	logBytes  []byte
	refuseLog bool
}

func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/logs"):
		s.seen = append(s.seen, "logs@"+r.URL.Query().Get("offset"))
		s.logBytes = append(s.logBytes, b...)
		w.WriteHeader(http.StatusNoContent)
	case strings.HasSuffix(r.URL.Path, "/status"):
		var rep node.RankReport
		_ = json.Unmarshal(b, &rep)
		if rep.Log == nil {
			s.seen = append(s.seen, "status")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		s.seen = append(s.seen, "status+log@"+strconv.FormatInt(rep.Log.Offset, 10))
		if s.refuseLog {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"invalid","field":"log","message":"log: unknown key"}}`))
			return
		}
		s.logBytes = append(s.logBytes, rep.Log.Data...)
		_, _ = w.Write([]byte(`{"reports_take_log":true}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// deliverLog delivers a Completed result whose log holds content, of
// which the server has offset bytes, and returns what the agent sent.
func deliverLog(t *testing.T, s *logServer, content string, offset int64, logInReport bool) []string {
	t.Helper()
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := t.TempDir()
	o, errs := OpenOutbox(filepath.Join(dir, "outbox"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	logPath := filepath.Join(dir, "std_log.txt")
	if err := os.WriteFile(logPath, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	zero := 0
	r := &Result{Ref: node.RankRef{AttemptID: "att-1"}, JobName: "j", LogPath: logPath, LogOffset: offset,
		Report: node.RankReport{State: node.RankCompleted, ExitCode: &zero}}
	if err := o.Put(r); err != nil {
		t.Fatal(err)
	}
	resp, err := o.Deliver(context.Background(), client.NewAgentClient(srv.URL, "tok"), r, false, logInReport, slog.New(slog.DiscardHandler))
	if err != nil || resp == nil {
		t.Fatalf("Deliver: %+v, %v; want accepted", resp, err)
	}
	if o.Len() != 0 {
		t.Errorf("the outbox still holds %d results after an accepted delivery", o.Len())
	}
	if r.Report.Log != nil {
		t.Errorf("the stored report kept the log's end: %+v", r.Report.Log)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := string(s.logBytes); got != content[offset:] {
		t.Errorf("the server got log %q, want %q", got, content[offset:])
	}
	return s.seen
}

// A quick rank's log rides with its report when the server takes it:
// one request, not two. Without the server's word, with a longer log
// or with nothing left to send, the log goes as before.
func TestDeliverCarriesAQuickLogInTheReport(t *testing.T) {
	long := strings.Repeat("x", node.MaxReportLog+1)
	for _, c := range []struct {
		name        string
		content     string
		offset      int64
		logInReport bool
		want        string
	}{
		{"quick log, server takes it", "hello\n", 0, true, "status+log@0"},
		{"the rest of a shipped log", "epoch 1\ndone\n", 8, true, "status+log@8"},
		{"server has not said it takes it", "hello\n", 0, false, "logs@0 status"},
		{"longer than a report carries", long, 0, true, "logs@0 status"},
		{"nothing left to send", "hello\n", 6, true, "status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(deliverLog(t, &logServer{}, c.content, c.offset, c.logInReport), " ")
			if got != c.want {
				t.Errorf("sent %q, want %q", got, c.want)
			}
		})
	}
}

// A server that does not know the report's log field (an older one,
// reached after a newer one said reports take a log) refuses the report
// as invalid: the agent uploads the log apart and reports again, and the
// result is delivered, not dropped.
func TestDeliverFallsBackWhenAServerRefusesTheLog(t *testing.T) {
	got := strings.Join(deliverLog(t, &logServer{refuseLog: true}, "hello\n", 0, true), " ")
	if want := "status+log@0 logs@0 status"; got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
}

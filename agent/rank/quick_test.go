package rank

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// eventServer records, in order, what a rank sent: "status:<State>" for
// each report and "log:<bytes>" for each chunk of its log.
type eventServer struct {
	*httptest.Server
	mu     sync.Mutex
	events []string
	// flag, when set, is a file made once the rank has been reported
	// Running and its log's first line shipped: a command waits for it.
	flag string
}

func newEventServer(t *testing.T) *eventServer {
	s := &eventServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ev := ""
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			var rep node.RankReport
			_ = json.Unmarshal(b, &rep)
			ev = "status:" + rep.State
		case strings.HasSuffix(r.URL.Path, "/logs"):
			ev = "log:" + string(b)
		}
		if ev != "" {
			s.mu.Lock()
			s.events = append(s.events, ev)
			if s.flag != "" && slices.Contains(s.events, "status:"+node.RankRunning) && slices.Contains(s.events, "log:early\n") {
				_ = os.WriteFile(s.flag, nil, 0o644)
			}
			s.mu.Unlock()
		}
		if strings.HasSuffix(r.URL.Path, "/status") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *eventServer) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// A command that ends within runningReportDelay is reported once, when it
// ends (no Running report), and its log goes with that report. The delay
// is made long, so that the command is quick whatever the machine's
// load.
func TestQuickRankReportsOnce(t *testing.T) {
	defer func(d time.Duration) { runningReportDelay = d }(runningReportDelay)
	runningReportDelay = time.Minute
	srv := newEventServer(t)
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "quick"})
	tk := artifactsTask("att-quick", "echo quick")
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	got := srv.got()
	if len(got) != 2 || got[0] != "log:quick\n" || got[1] != "status:"+node.RankCompleted {
		t.Fatalf("a quick rank sent %q, want its log then one final report", got)
	}
}

// A command that runs on past runningReportDelay is reported Running
// while it runs, and what it logs is shipped while it runs: the command
// ends only once the server has both (a rank that did neither while it
// ran would run until the test's deadline).
func TestLongerRankReportsRunningAndShipsItsLog(t *testing.T) {
	srv := newEventServer(t)
	srv.flag = filepath.Join(t.TempDir(), "seen")
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "longer"})
	tk := artifactsTask("att-longer", "echo early && while ! test -e "+srv.flag+"; do sleep 0.05; done && echo late")
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	got := srv.got()
	running, early, final := -1, -1, -1
	for i, ev := range got {
		switch ev {
		case "status:" + node.RankRunning:
			running = i
		case "log:early\n":
			early = i
		case "status:" + node.RankCompleted:
			final = i
		}
	}
	if running < 0 || early < 0 || final < 0 || final != len(got)-1 || running > final || early > final {
		t.Fatalf("a longer rank sent %q, want Running and its first line before the final report", got)
	}
}

// lineCounter is a slog handler that keeps each record's message and
// attributes (those given With included).
type lineCounter struct {
	mu    *sync.Mutex
	lines *[]map[string]any
	attrs []slog.Attr
}

func newLineCounter() lineCounter {
	return lineCounter{mu: &sync.Mutex{}, lines: &[]map[string]any{}}
}

func (h lineCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h lineCounter) WithGroup(string) slog.Handler            { return h }
func (h lineCounter) WithAttrs(as []slog.Attr) slog.Handler {
	h.attrs = append(slices.Clip(h.attrs), as...)
	return h
}
func (h lineCounter) Handle(_ context.Context, r slog.Record) error {
	line := map[string]any{"msg": r.Message}
	for _, a := range h.attrs {
		line[a.Key] = a.Value.Any()
	}
	r.Attrs(func(a slog.Attr) bool { line[a.Key] = a.Value.Any(); return true })
	h.mu.Lock()
	*h.lines = append(*h.lines, line)
	h.mu.Unlock()
	return nil
}

func (h lineCounter) got() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.lines)
}

// A quick rank logs one line, "rank ended", which says where its
// processes ran, how long their start took and that its result was
// delivered; a rank that runs on past runningReportDelay also logs
// "rank started" while it runs.
func TestQuickRankLogsOneLine(t *testing.T) {
	defer func(d time.Duration) { runningReportDelay = d }(runningReportDelay)
	runningReportDelay = time.Minute
	srv := newEventServer(t)
	lines := newLineCounter()
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "one-line", Log: slog.New(lines)})
	tk := artifactsTask("att-one-line", "true")
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	got := lines.got()
	if len(got) != 1 {
		t.Fatalf("a quick rank logged %d lines, want 1: %v", len(got), got)
	}
	l := got[0]
	if l["msg"] != "rank ended" || l["pids"] == nil || l["start_took"] == nil || l["delivered"] != true ||
		l["state"] != node.RankCompleted || l["attempt"] != int64(1) {
		t.Fatalf("a quick rank's line is %v, want rank ended with its pids, start_took, state and delivered", l)
	}

	runningReportDelay = time.Millisecond
	lines = newLineCounter()
	a = newTestAgent(t, Node{ServerURL: srv.URL, NodeID: "two-lines", Log: slog.New(lines)})
	tk = artifactsTask("att-two-lines", "sleep 0.2")
	tk.Outputs = nil
	runRank(t, a, tk, nil)
	var msgs []any
	for _, l := range lines.got() {
		msgs = append(msgs, l["msg"])
	}
	if len(msgs) != 2 || msgs[0] != "rank started" || msgs[1] != "rank ended" {
		t.Fatalf("a longer rank logged %v, want rank started, rank ended", msgs)
	}
}

package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func TestOutboxKeepsResultsAcrossAgents(t *testing.T) {
	dir := t.TempDir()
	o, errs := openOutbox(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	end := time.Date(2026, 11, 22, 12, 0, 5, 0, time.UTC)
	code := 7
	p := &pendingResult{Ref: shoal.RankRef{AttemptID: "att-1", Rank: 0}, JobName: "j", OutputsDir: filepath.Join(dir, "out"), LogOffset: 42,
		Report: shoal.RankReport{State: shoal.RankFailed, ExitCode: &code, EndTime: &end}}
	if err := o.put(p); err != nil {
		t.Fatal(err)
	}
	if !o.has(p.Ref) || o.len() != 1 {
		t.Fatal("the result is not kept")
	}
	if !o.claim(p.Ref) || o.claim(p.Ref) {
		t.Fatal("a result can be claimed exactly once at a time")
	}
	o.unclaim(p.Ref)
	// A file that cannot be read is set aside, not dropped or fatal.
	if err := os.WriteFile(filepath.Join(dir, resultsDir, "broken-r0.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The next agent on the same work dir finds the result as it was.
	o2, errs := openOutbox(dir)
	if len(errs) != 1 {
		t.Fatalf("errors %v, want one for the broken file", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, resultsDir, "broken-r0.json.bad")); err != nil {
		t.Fatalf("the broken file was not set aside: %v", err)
	}
	got := o2.list()
	if len(got) != 1 {
		t.Fatalf("%d results, want 1", len(got))
	}
	g := got[0]
	if g.Ref != p.Ref || g.Report.State != shoal.RankFailed || *g.Report.ExitCode != 7 || !g.Report.EndTime.Equal(end) || g.LogOffset != 42 || g.OutputsDir != p.OutputsDir {
		t.Fatalf("result read back as %+v", g)
	}
	o2.done(p.Ref)
	if o2.len() != 0 {
		t.Fatal("done did not forget the result")
	}
	o3, _ := openOutbox(dir)
	if o3.len() != 0 {
		t.Fatal("done did not remove the result's file")
	}
}

// A result the server could not take because of a transient answer (an
// internal error, its store's disk full) is kept and retried; only a real
// refusal ends delivery.
func TestTransientAnswersKeepResults(t *testing.T) {
	for code, want := range map[string]bool{
		shoal.EINTERNAL: false, shoal.ESTORAGEFULL: false, shoal.EUNAVAILABLE: false,
		shoal.EFORBIDDEN: true, shoal.ENOTFOUND: true, shoal.ECONFLICT: true,
	} {
		if got := isAnswer(shoal.Errorf(code, "x")); got != want {
			t.Errorf("isAnswer(%s) = %v, want %v", code, got, want)
		}
	}
}

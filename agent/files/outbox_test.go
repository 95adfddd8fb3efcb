package files

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

func TestOutboxKeepsResultsAcrossAgents(t *testing.T) {
	dir := t.TempDir()
	o, errs := OpenOutbox(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	end := time.Date(2026, 11, 22, 12, 0, 5, 0, time.UTC)
	code := 7
	p := &Result{Ref: node.RankRef{AttemptID: "att-1", Rank: 0}, JobName: "j", OutputsDir: filepath.Join(dir, "out"), LogOffset: 42,
		Report: node.RankReport{State: node.RankFailed, ExitCode: &code, EndTime: &end}}
	if err := o.Put(p); err != nil {
		t.Fatal(err)
	}
	if !o.Has(p.Ref) || o.Len() != 1 {
		t.Fatal("the result is not kept")
	}
	if !o.Claim(p.Ref) || o.Claim(p.Ref) {
		t.Fatal("a result can be claimed exactly once at a time")
	}
	o.Unclaim(p.Ref)
	// A file that cannot be read is set aside, not dropped or fatal.
	if err := os.WriteFile(filepath.Join(dir, resultsDir, "broken-r0.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The next agent on the same work dir finds the result as it was.
	o2, errs := OpenOutbox(dir)
	if len(errs) != 1 {
		t.Fatalf("errors %v, want one for the broken file", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, resultsDir, "broken-r0.json.bad")); err != nil {
		t.Fatalf("the broken file was not set aside: %v", err)
	}
	got := o2.List()
	if len(got) != 1 {
		t.Fatalf("%d results, want 1", len(got))
	}
	g := got[0]
	if g.Ref != p.Ref || g.Report.State != node.RankFailed || *g.Report.ExitCode != 7 || !g.Report.EndTime.Equal(end) || g.LogOffset != 42 || g.OutputsDir != p.OutputsDir {
		t.Fatalf("result read back as %+v", g)
	}
	o2.Done(p.Ref)
	if o2.Len() != 0 {
		t.Fatal("done did not forget the result")
	}
	o3, _ := OpenOutbox(dir)
	if o3.Len() != 0 {
		t.Fatal("done did not remove the result's file")
	}
}

// A result the server could not take because of a transient answer (an
// internal error, its store's disk full) is kept and retried; only a real
// refusal ends delivery.
func TestTransientAnswersKeepResults(t *testing.T) {
	for code, want := range map[string]bool{
		core.EINTERNAL: false, core.ESTORAGEFULL: false, core.EUNAVAILABLE: false,
		core.EFORBIDDEN: true, core.ENOTFOUND: true, core.ECONFLICT: true,
	} {
		if got := isAnswer(core.Errorf(code, "x")); got != want {
			t.Errorf("isAnswer(%s) = %v, want %v", code, got, want)
		}
	}
}

// Delivered results' files are written over for the next results instead
// of being deleted (freed inodes slow ext4's next allocations) or kept
// (a node would keep one per job): a stream of results keeps at most
// maxSpares files, reuses the same inodes, and never reads back a
// shorter result with a longer one's tail.
func TestOutboxReusesDeliveredFiles(t *testing.T) {
	dir := t.TempDir()
	o, errs := OpenOutbox(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	inodes := map[uint64]bool{}
	for i := range 50 {
		// Every other result is long: a short one written over it must
		// not keep its tail.
		name := "j"
		if i%2 == 0 {
			name = string(make([]byte, 2000)) + "long"
		}
		p := &Result{Ref: node.RankRef{AttemptID: "att-" + string(rune('a'+i%26)) + string(rune('a'+i/26))}, JobName: name}
		if err := o.Put(p); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(o.Path(p.Ref))
		if err != nil {
			t.Fatal(err)
		}
		inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
		back, errs := OpenOutbox(dir)
		if len(errs) > 0 || back.Len() != 1 || back.List()[0].JobName != name {
			t.Fatalf("result %d read back as %d results (%v)", i, back.Len(), errs)
		}
		o.Done(p.Ref)
	}
	if len(inodes) > 2 {
		t.Fatalf("50 results one after another used %d files; want them to reuse one or two", len(inodes))
	}
	entries, _ := os.ReadDir(filepath.Join(dir, resultsDir))
	if len(entries) > maxSpares {
		t.Fatalf("%d files left in the results folder; want at most %d spares", len(entries), maxSpares)
	}
	// A new agent takes the spares over, and numbers new ones past them.
	o2, _ := OpenOutbox(dir)
	if len(o2.spares) == 0 || o2.nextSpare == 0 {
		t.Fatalf("a new agent found %d spares, numbering from %d", len(o2.spares), o2.nextSpare)
	}
}

// Put wakes the delivery loop; Keep writes the same file without waking
// it (the agent's Finish delivers the result itself at once), and both
// keep the result for a new agent to find.
func TestOutboxKeepWakesNoOne(t *testing.T) {
	dir := t.TempDir()
	o, errs := OpenOutbox(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	kept := &Result{Ref: node.RankRef{AttemptID: "att-kept"}, JobName: "kept"}
	if err := o.Keep(kept); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.Wake():
		t.Fatal("Keep woke the delivery loop")
	default:
	}
	put := &Result{Ref: node.RankRef{AttemptID: "att-put"}, JobName: "put"}
	if err := o.Put(put); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.Wake():
	default:
		t.Fatal("Put did not wake the delivery loop")
	}
	back, errs := OpenOutbox(dir)
	if len(errs) > 0 || !back.Has(kept.Ref) || !back.Has(put.Ref) {
		t.Fatalf("a new agent found %v (%v), want both results", back.Refs(), errs)
	}
}

// openIn lists the files of dir this process holds open, by the link
// /proc/self/fd has for each (a removed one ends in " (deleted)").
func openIn(t *testing.T, dir string) []string {
	t.Helper()
	// The outbox's descriptors are Linux's (unix.Pwrite, Ftruncate),
	// and Linux always has /proc/self/fd: its absence is a failure.
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal("list this process's open files:", err)
	}
	var out []string
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(l, dir+"/") {
			out = append(out, l)
		}
	}
	return out
}

// A delivered result's file stays open as a spare, and the next result
// is written through it: no open and close per result. A result put
// again (Deliver's Put once its outputs went) leaves no descriptor of
// the file it replaced, and however results pile up, the outbox holds
// at most maxOpen files open.
func TestOutboxKeepsSparesOpen(t *testing.T) {
	dir := t.TempDir()
	o, errs := OpenOutbox(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	results := filepath.Join(dir, resultsDir)
	ref := func(i int) node.RankRef { return node.RankRef{AttemptID: "att-" + strconv.Itoa(i)} }
	for i := range 3 {
		if err := o.Put(&Result{Ref: ref(i), JobName: "j"}); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if got := openIn(t, results); len(got) != 1 || got[0] != o.Path(ref(i)) {
				t.Fatalf("result %d: files open %v, want its own, written through the spare kept open", i, got)
			}
		}
		o.Done(ref(i))
		if i == 0 {
			continue // the first went into a new file, opened when it is next taken
		}
		if got := openIn(t, results); len(got) != 1 || !strings.Contains(got[0], ".spare-") {
			t.Fatalf("after result %d was delivered: files open %v, want its file, now a spare", i, got)
		}
	}
	for range 3 {
		if err := o.Put(&Result{Ref: ref(9), JobName: "again"}); err != nil {
			t.Fatal(err)
		}
	}
	o.Done(ref(9))
	for _, f := range openIn(t, results) {
		if strings.HasSuffix(f, " (deleted)") {
			t.Fatalf("a replaced result's file is still open: %v", openIn(t, results))
		}
	}
	// Results pile up (a server away) while others are delivered.
	n := 100
	for round := range 10 {
		for i := range 2 * maxSpares {
			if err := o.Keep(&Result{Ref: ref(n + round*100 + i), JobName: "j"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range maxSpares {
			o.Done(ref(n + round*100 + 2*i + 1))
		}
		if got := openIn(t, results); len(got) > maxOpen {
			t.Fatalf("round %d: %d files open, want at most %d", round, len(got), maxOpen)
		}
	}
	back, errs := OpenOutbox(dir)
	if len(errs) > 0 || back.Len() != o.Len() {
		t.Fatalf("a new agent finds %d results (%v), want %d", back.Len(), errs, o.Len())
	}
}

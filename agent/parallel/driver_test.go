package parallel_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	"github.com/shoal-ml/shoal/domain/job"
	par "github.com/shoal-ml/shoal/domain/parallel"
)

// scoreScript scores each file as "<name> <content>", leaves a file per
// item in its --out folder, and fails loudly when the driver's token
// reached it or its sys.argv is not Azure's.
const scoreScript = `
import argparse, os, sys
def init():
    global out
    assert sys.argv[0] == "score.py", sys.argv
    assert "SHOAL_PARALLEL_TASK" not in os.environ, "the ledger's token reached the entry script"
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    out = p.parse_known_args()[0].out
def run(mini_batch):
    rows = []
    for f in mini_batch:
        name = os.path.basename(f)
        with open(os.path.join(out, name + ".seen"), "w") as w:
            w.write(str(os.getpid()))
        rows.append("%s %s" % (name, open(f).read().strip()))
    return rows
`

func inputFiles(t *testing.T, n int) string {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprint(i)
	}
	writeFiles(t, dir, files)
	return dir
}

// A folder's files go in mini-batches of mini_batch_size, sorted by
// name; a rank posts what its workers wrote before it reports each
// mini-batch done, and rank 0, once everything is finished, writes the
// rows to the append_row_to file and unpacks every rank's files.
func TestDriverScoresFilesInMiniBatchesAndRankZeroWritesOutputs(t *testing.T) {
	l, srv := paralleltest.New(t)
	in := inputFiles(t, 25)
	l.With(func(l *paralleltest.Ledger) {
		l.WantFiles = func(i int) []string {
			var out []string
			for j := i * 10; j < min(i*10+10, 25); j++ {
				out = append(out, fmt.Sprintf("extra/f%02d.txt.seen", j))
			}
			return out
		}
	})
	sp := spec("score.py")
	sp.MiniBatchSize, sp.AppendRowTo = "10", "${{outputs.scores}}"
	mk := func(rank int) rankRun {
		dir := t.TempDir()
		return rankRun{rank: rank, nodes: 2, spec: sp, input: in, code: map[string]string{"score.py": scoreScript},
			outputs: []string{"scores", "extra"}, fileOutputs: map[string]string{"scores": "scores.csv"}, dir: dir,
			args: []string{"--out", filepath.Join(dir, "outputs", "extra")}}
	}
	// Rank 1 scores everything (rank 0 is not there yet), and ends.
	r1 := mk(1).run(t, srv.URL, l.Token)
	if r1.code != 0 {
		t.Fatalf("rank 1 exited %d:\n%s", r1.code, r1.out)
	}
	if _, err := os.Stat(filepath.Join(r1.outDir, "scores", "scores.csv")); err == nil {
		t.Errorf("rank 1 wrote the rows: only rank 0 writes the outputs")
	}
	log, completes, plans := l.Snapshot()
	if len(plans) != 1 || plans[0].Kind != par.KindFiles || plans[0].Items != 25 || plans[0].MiniBatches != 3 || len(plans[0].Describe) != 3 {
		t.Fatalf("plan: %+v", plans)
	}
	if plans[0].Describe[0] != "f00.txt (+9 more)" {
		t.Errorf("describe: %q", plans[0].Describe[0])
	}
	if len(completes) != 3 {
		t.Fatalf("completes: %v", log)
	}
	for _, c := range completes {
		if c.Outcome != par.OutcomeDone || c.Rank != 1 || c.Try != 1 || len(c.FailedItems) != 0 {
			t.Errorf("complete: %+v", c)
		}
	}
	l.With(func(l *paralleltest.Ledger) {
		if l.MissingFiles != nil {
			t.Errorf("reported done before its files were posted: %v\n%v", l.MissingFiles, log)
		}
	})
	// Rank 0 proposes the same plan, finds everything finished, and
	// writes the outputs from the ledger.
	r0 := mk(0).run(t, srv.URL, l.Token)
	if r0.code != 0 {
		t.Fatalf("rank 0 exited %d:\n%s", r0.code, r0.out)
	}
	_, _, plans = l.Snapshot()
	if len(plans) != 2 || plans[1].Fingerprint != plans[0].Fingerprint {
		t.Fatalf("rank 0's plan differs: %+v", plans)
	}
	rows := strings.Split(strings.TrimSpace(read(t, filepath.Join(r0.outDir, "scores", "scores.csv"))), "\n")
	if len(rows) != 25 {
		t.Fatalf("rows: %q", rows)
	}
	for i, row := range rows {
		if want := fmt.Sprintf("f%02d.txt %d", i, i); row != want {
			t.Errorf("row %d = %q, want %q", i, row, want)
		}
	}
	for i := range 25 {
		if _, err := os.Stat(filepath.Join(r0.outDir, "extra", fmt.Sprintf("f%02d.txt.seen", i))); err != nil {
			t.Errorf("rank 1's file did not reach rank 0's outputs: %v", err)
		}
	}
	// What the driver writes is the job's account's alone.
	for _, p := range []string{filepath.Join(r0.outDir, "scores", "scores.csv"), filepath.Join(r0.outDir, "extra", "f03.txt.seen")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", p, fi.Mode(), err)
		}
	}
	if _, err := os.Stat(filepath.Join(r0.outDir, "scores", "errors.txt")); err == nil {
		t.Errorf("errors.txt written with no errors")
	}
}

// max_concurrency_per_instance workers run mini-batches at once: the
// rank asks for as many as it has idle workers, and each runs in a
// process of its own.
func TestDriverRunsWorkersConcurrently(t *testing.T) {
	l, srv := paralleltest.New(t)
	sp := spec("pid.py")
	sp.MiniBatchSize, sp.MaxConcurrencyPerInstance, sp.AppendRowTo = "1", 3, "${{outputs.out}}"
	sp.AppendRowFile = "rows.txt"
	script := "import os\ndef init(): pass\ndef run(mb): return [os.getpid() for _ in mb]\n"
	r := rankRun{spec: sp, input: inputFiles(t, 6), code: map[string]string{"pid.py": script}, outputs: []string{"out"}}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	log, _, _ := l.Snapshot()
	if log[0] != "lease r0 max 3" {
		t.Errorf("first lease: %q, want max 3 (three idle workers)", log[0])
	}
	pids := strings.Fields(read(t, filepath.Join(r.outDir, "out", "rows.txt")))
	slices.Sort(pids)
	if len(pids) != 6 || len(slices.Compact(pids)) < 3 {
		t.Errorf("want 6 rows from 3 worker processes: %v", pids)
	}
}

// An entry script without init() or run(), or one that does not import,
// ends the rank at once with a sentence naming it; no mini-batch is
// leased, so none is spent.
func TestDriverRefusesEntryScriptWithoutInitOrRun(t *testing.T) {
	for name, c := range map[string]struct{ script, want string }{
		"no run":       {"def init(): pass\n", "score.py defines no run()"},
		"no init":      {"def run(mb): return mb\n", "score.py defines no init()"},
		"neither":      {"x = 1\n", "defines no init() and no run()"},
		"import error": {"import no_such_module_here\n", "importing score.py failed"},
		"init raises":  {"def init(): raise ValueError('no model')\ndef run(mb): return mb\n", "init() raised"},
		"not there":    {"", "entry_script: missing.py"},
	} {
		t.Run(name, func(t *testing.T) {
			l, srv := paralleltest.New(t)
			sp := spec("score.py")
			if c.script == "" {
				sp.EntryScript = "missing.py"
			}
			r := rankRun{spec: sp, input: inputFiles(t, 3), code: map[string]string{"score.py": c.script}}.run(t, srv.URL, l.Token)
			if r.code != 1 || !strings.Contains(r.out, c.want) {
				t.Fatalf("exit %d, want 1 saying %q:\n%s", r.code, c.want, r.out)
			}
			if log, _, plans := l.Snapshot(); len(log) != 0 || len(plans) != 0 {
				t.Errorf("the ledger was asked: %v %v", plans, log)
			}
		})
	}
}

// A run that raises on every item spends each mini-batch's tries; past
// error_threshold the ledger aborts, the rank exits 1 with its message,
// and rank 0 first writes the errors, naming each item, beside the rows.
func TestDriverStopsWhenRunRaisesOnEveryItem(t *testing.T) {
	l, srv := paralleltest.New(t)
	l.With(func(l *paralleltest.Ledger) {
		l.MaxRetries, l.ItemThreshold = 1, 2
	})
	sp := spec("bad.py")
	sp.MiniBatchSize, sp.AppendRowTo = "1", "${{outputs.out}}"
	sp.AppendRowFile = "rows.txt"
	script := "def init(): pass\ndef run(mb): raise RuntimeError('cannot score ' + mb[0])\n"
	r := rankRun{spec: sp, input: inputFiles(t, 5), code: map[string]string{"bad.py": script}, outputs: []string{"out"}}.run(t, srv.URL, l.Token)
	if r.code != 1 || !strings.Contains(r.out, "the error threshold was passed") {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	_, completes, _ := l.Snapshot()
	if len(completes) != 6 {
		t.Fatalf("want 3 mini-batches tried twice: %+v", completes)
	}
	for _, c := range completes {
		if c.Outcome != par.OutcomeFailed || !strings.Contains(c.Error, "RuntimeError: cannot score") || len(c.FailedItems) != 1 {
			t.Errorf("complete: %+v", c)
		}
	}
	errs := read(t, filepath.Join(r.outDir, "out", "errors.txt"))
	for _, f := range []string{"f00.txt", "f01.txt", "f02.txt"} {
		if !strings.Contains(errs, "\t"+f+"\t") || !strings.Contains(errs, "cannot score") {
			t.Errorf("errors.txt does not name %s:\n%s", f, errs)
		}
	}
}

// run returning fewer rows than a mini-batch's files leaves the files
// past its rows failed; more rows than files fails the try.
func TestDriverChecksRowCounts(t *testing.T) {
	l, srv := paralleltest.New(t)
	l.With(func(l *paralleltest.Ledger) {
		l.MaxRetries = 0
	})
	sp := spec("rows.py")
	sp.MiniBatchSize = "3"
	script := `
import os
def init(): pass
def run(mb):
    names = [os.path.basename(f) for f in mb]
    if "f00.txt" in names: return names[:1] + ["two\nlines\x00"]
    return names + ["extra"]
`
	r := rankRun{spec: sp, input: inputFiles(t, 6), code: map[string]string{"rows.py": script}}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	_, completes, _ := l.Snapshot()
	byIndex := map[int]par.CompleteRequest{}
	for _, c := range completes {
		byIndex[c.Index] = c
	}
	short := byIndex[0]
	// A row is one line: its line breaks and NUL written as escapes.
	if short.Outcome != par.OutcomeDone || strings.Join(short.Rows, "|") != `f00.txt|two\nlines\0` || len(short.FailedItems) != 1 || short.FailedItems[0].Item != "f02.txt" ||
		!strings.Contains(short.FailedItems[0].Error, "2 rows for 3 items") {
		t.Errorf("fewer rows: %+v", short)
	}
	long := byIndex[1]
	if long.Outcome != par.OutcomeFailed || !strings.Contains(long.Error, "run returned 4 rows for a mini-batch of 3 files") || len(long.FailedItems) != 3 {
		t.Errorf("more rows: %+v", long)
	}
	if _, err := os.Stat(filepath.Join(r.task.LogsDir, "errors.txt")); err != nil {
		t.Errorf("with no append output errors.txt goes to ./logs: %v", err)
	}
}

// triesScript fails a mini-batch's first try in the way its first
// argument says (raise, hang past the timeout, the worker dying), marking
// it in the folder its second argument names, and scores the second.
const triesScript = `
import os, sys, time
def init(): pass
def run(mb):
    how, marks = sys.argv[1], sys.argv[2]
    mark = os.path.join(marks, os.path.basename(mb[0]))
    if not os.path.exists(mark):
        open(mark, "w").close()
        print("FIRST-TRY-OF", os.path.basename(mb[0]))
        if how == "raise": raise ValueError("first try fails")
        if how == "hang": time.sleep(600)
        if how == "die": os._exit(3)
    return [os.path.basename(f) for f in mb]
`

// A try that fails — run raises, outlives retry_settings.timeout (its
// worker is killed and replaced), or its worker dies — is reported as
// such and the mini-batch's next try is scored.
func TestDriverReportsFailedTriesAndScoresTheRetry(t *testing.T) {
	for how, want := range map[string]struct{ outcome, err string }{
		"raise": {par.OutcomeFailed, "ValueError: first try fails"},
		"hang":  {par.OutcomeTimeout, "outlived retry_settings.timeout of 1 seconds"},
		"die":   {par.OutcomeFailed, "ended (exit code 3)"},
	} {
		t.Run(how, func(t *testing.T) {
			l, srv := paralleltest.New(t)
			sp := spec("tries.py")
			sp.MiniBatchSize, sp.Retry = "2", &job.ParallelRetry{Timeout: 1}
			r := rankRun{spec: sp, input: inputFiles(t, 2), code: map[string]string{"tries.py": triesScript},
				args: []string{how, t.TempDir()}}.run(t, srv.URL, l.Token)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.out)
			}
			_, completes, _ := l.Snapshot()
			if len(completes) != 2 {
				t.Fatalf("completes: %+v", completes)
			}
			first, second := completes[0], completes[1]
			if first.Try != 1 || first.Outcome != want.outcome || !strings.Contains(first.Error, want.err) || len(first.FailedItems) != 2 {
				t.Errorf("first try: %+v", first)
			}
			if second.Try != 2 || second.Outcome != par.OutcomeDone || strings.Join(second.Rows, ",") != "f00.txt,f01.txt" {
				t.Errorf("second try: %+v", second)
			}
			// What the failed try printed is in the log, even from a
			// worker that was killed or died.
			if !strings.Contains(r.out, "FIRST-TRY-OF f00.txt") {
				t.Errorf("the first try's print is lost:\n%s", r.out)
			}
		})
	}
}

// An empty input fails the rank at once, naming input_data; nothing is
// proposed to the ledger.
func TestDriverFailsOnEmptyInput(t *testing.T) {
	l, srv := paralleltest.New(t)
	r := rankRun{spec: spec("score.py"), input: t.TempDir(), code: map[string]string{"score.py": scoreScript}}.run(t, srv.URL, l.Token)
	if r.code != 1 || !strings.Contains(r.out, "input_data: the input holds no files") {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if _, _, plans := l.Snapshot(); len(plans) != 0 {
		t.Errorf("plans: %+v", plans)
	}
}

// The ledger's refusals end the rank with its words: a token of an
// attempt that ended, a listing that differs from the job's plan.
func TestDriverEndsOnTheLedgersRefusal(t *testing.T) {
	l, srv := paralleltest.New(t)
	in := inputFiles(t, 3)
	ok := rankRun{spec: spec("score.py"), input: in, code: map[string]string{"score.py": scoreScript}, args: []string{"--out", t.TempDir()}}
	r := ok.run(t, srv.URL, "shoalpar_0_stale")
	if r.code != 1 || !strings.Contains(r.out, "refused this attempt's token") {
		t.Fatalf("stale token: exit %d:\n%s", r.code, r.out)
	}
	l.With(func(l *paralleltest.Ledger) {
		l.Plan = &par.PlanRequest{Kind: par.KindFiles, Items: 3, MiniBatches: 1, Fingerprint: "another"}
	})
	r = ok.run(t, srv.URL, l.Token)
	if r.code != 1 || !strings.Contains(r.out, "input_data: this node lists the input differently") {
		t.Fatalf("other plan: exit %d:\n%s", r.code, r.out)
	}
}

// A ledger that aborted (another rank passed the error threshold) stops
// every rank with its message; rank 0 first writes the errors it has.
// What rank 0 unpacks of the posted files stays inside the job's output
// folders: a path out of them, or under no output, is left out.
func TestDriverAbortsWhenTheLedgerDoes(t *testing.T) {
	l, srv := paralleltest.New(t)
	in := inputFiles(t, 2)
	rr := rankRun{spec: spec("score.py"), input: in, code: map[string]string{"score.py": scoreScript},
		outputs: []string{"out"}, args: []string{"--out", t.TempDir()}}
	rr.spec.AppendRowTo = "${{outputs.out}}"
	// A first rank proposes the plan; then the ledger aborts.
	l.With(func(l *paralleltest.Ledger) {
		l.Aborted = "the error threshold was passed: items f00.txt, f01.txt failed"
		l.Errors = []string{"0\tf00.txt\tValueError: bad"}
		l.Files = map[string][]byte{"out/kept.txt": []byte("k"), "../../escaped.txt": []byte("x"), "other/x.txt": []byte("x")}
	})
	r := rr.run(t, srv.URL, l.Token)
	if r.code != 1 || !strings.Contains(r.out, "the job stops: the error threshold was passed: items f00.txt, f01.txt failed") {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if got := read(t, filepath.Join(r.outDir, "out", "errors.txt")); got != "0\tf00.txt\tValueError: bad\n" {
		t.Errorf("errors.txt: %q", got)
	}
	if got := read(t, filepath.Join(r.outDir, "out", "kept.txt")); got != "k" {
		t.Errorf("kept.txt: %q", got)
	}
	for _, p := range []string{filepath.Join(r.dir, "escaped.txt"), filepath.Join(filepath.Dir(r.dir), "escaped.txt"), filepath.Join(r.outDir, "other")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if _, completes, _ := l.Snapshot(); len(completes) != 0 {
		t.Errorf("completes: %+v", completes)
	}
}

// A batch deployment's scoring script finds its model where
// AZUREML_MODEL_DIR says and writes its own files where
// AZUREML_BI_OUTPUT_PATH says (the score output), as on Azure; what it
// writes there reaches the job's output with the rows.
func TestDriverGivesTheScoringScriptAzuresVariables(t *testing.T) {
	l, srv := paralleltest.New(t)
	model := t.TempDir()
	writeFiles(t, model, map[string]string{"model.txt": "m1"})
	script := `
import os
def init():
    global model, out
    model = open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model.txt")).read()
    out = os.environ["AZUREML_BI_OUTPUT_PATH"]
def run(mb):
    for f in mb:
        open(os.path.join(out, os.path.basename(f) + ".pred"), "w").write(model)
    return [model + " " + os.path.basename(f) for f in mb]
`
	sp := spec("batch_driver.py")
	sp.ModelInput, sp.AppendRowTo, sp.AppendRowFile = "model", "${{outputs.score}}", "predictions.csv"
	r := rankRun{spec: sp, input: inputFiles(t, 2), inputs: map[string]string{"model": model},
		code: map[string]string{"batch_driver.py": script}, outputs: []string{"score"}}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if got := read(t, filepath.Join(r.outDir, "score", "predictions.csv")); got != "m1 f00.txt\nm1 f01.txt\n" {
		t.Errorf("predictions.csv: %q", got)
	}
	if got := read(t, filepath.Join(r.outDir, "score", "f01.txt.pred")); got != "m1" {
		t.Errorf("the script's own file: %q", got)
	}
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if l.Files["score/f00.txt.pred"] == nil || l.Files["score/predictions.csv"] != nil {
		t.Errorf("posted: %v (the script's files, never the append file)", l.Files)
	}
}

// A uri_file input is one mini-batch of its one file; an input that is
// not on the node (a direct input's URI) fails naming input_data.
func TestDriverTakesAFileInputWhole(t *testing.T) {
	l, srv := paralleltest.New(t)
	in := filepath.Join(inputFiles(t, 3), "f01.txt")
	sp := spec("s.py")
	sp.AppendRowTo = "${{outputs.out}}"
	script := "import os\ndef init(): pass\ndef run(mb): return [os.path.basename(f) + ' ' + open(f).read() for f in mb]\n"
	r := rankRun{spec: sp, inputType: "uri_file", input: in, code: map[string]string{"s.py": script}, outputs: []string{"out"}}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if got := read(t, filepath.Join(r.outDir, "out", "parallel_run_step.txt")); got != "f01.txt 1\n" {
		t.Errorf("rows %q", got)
	}
	l2, srv2 := paralleltest.New(t)
	r = rankRun{spec: spec("s.py"), input: "azureml://datastores/d/paths/p", code: map[string]string{"s.py": script}}.run(t, srv2.URL, l2.Token)
	if r.code != 1 || !strings.Contains(r.out, "input_data: the input is not a folder or file on this node") {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
}

// The driver reaches the ledger directly, whatever proxy the job's
// environment names (its token goes to the server only), and waits out
// a server that is restarting: nothing done is lost.
func TestDriverReachesTheLedgerDirectlyAndWaitsForIt(t *testing.T) {
	sp := spec("s.py")
	sp.AppendRowTo = "${{outputs.out}}"
	l, srv := paralleltest.New(t)
	l.With(func(l *paralleltest.Ledger) { l.Unavailable = 3 })
	script := "import os\ndef init(): pass\ndef run(mb): return [os.path.basename(f) for f in mb]\n"
	proxy := "http://127.0.0.1:1"
	r := rankRun{spec: sp, input: inputFiles(t, 2), code: map[string]string{"s.py": script}, outputs: []string{"out"},
		env: map[string]string{"HTTP_PROXY": proxy, "http_proxy": proxy, "HTTPS_PROXY": proxy, "https_proxy": proxy}}.run(t, srv.URL, l.Token)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if got := read(t, filepath.Join(r.outDir, "out", "parallel_run_step.txt")); got != "f00.txt\nf01.txt\n" {
		t.Errorf("rows %q", got)
	}
	if log, _, _ := l.Snapshot(); !slices.Contains(log, "unavailable") {
		t.Errorf("the server was never unavailable: %v", log)
	}
}

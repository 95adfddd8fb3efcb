package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testsmtp"
)

// A guide's walkthrough is the blocks of its page marked for it, run in
// the page's order in one fresh folder, with `shoal` on the PATH and the
// client config of a fresh server, as a reader would type them:
//
//	<!-- run -->            before a sh block: its commands run (bash -e);
//	<!-- file: PATH -->     before any block: it is written to PATH.
//
// A command whose comment starts with `# ERROR:` must fail, its output
// holding each part of the comment's text between "..." (what the page
// says the error is). The blocks are read from the Markdown, never copied
// into a test, so the page and what runs are one.

// walkStep is one marked block of a guide.
type walkStep struct {
	line int    // the block's first line
	run  bool   // a sh block to run
	file string // else the file it is written to
	text string
}

// walkMarker matches the marker comment before a block.
var walkMarker = regexp.MustCompile(`^\s*<!--\s*(run|file:\s*(\S+))\s*-->\s*$`)

// walkthrough returns a page's marked blocks in order.
func walkthrough(page string) []walkStep {
	var steps []walkStep
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		lang := strings.TrimSpace(trimmed[3:])
		var body []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			l := lines[j]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			body = append(body, l)
		}
		k := i - 1
		for k >= 0 && strings.TrimSpace(lines[k]) == "" {
			k--
		}
		if k >= 0 {
			if m := walkMarker.FindStringSubmatch(lines[k]); m != nil {
				s := walkStep{line: i + 2, text: strings.Join(body, "\n") + "\n"}
				if m[1] == "run" {
					s.run = lang == "sh" || lang == "bash"
				} else {
					s.file = m[2]
				}
				if s.run || s.file != "" {
					steps = append(steps, s)
				}
			}
		}
		i = j
	}
	return steps
}

// expectedError matches a command line whose comment says it fails.
var expectedError = regexp.MustCompile(`^(.*?)\s+#\s*ERROR:\s*(.*)$`)

// withExpectedErrors rewrites each `cmd  # ERROR: a ... b` line of a sh
// block into a check that cmd fails and says a and b.
func withExpectedErrors(block string) string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		m := expectedError.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
			continue
		}
		check := fmt.Sprintf("if walk_out=$({ %s; } 2>&1); then printf '%%s\\n' \"$walk_out\"; echo 'walkthrough: this command was to fail'; exit 1; fi; printf '%%s\\n' \"$walk_out\"", m[1])
		for _, part := range strings.Split(m[2], "...") {
			if part = strings.TrimSpace(part); part != "" {
				check += fmt.Sprintf("; grep -qF -- %s <<<\"$walk_out\" || { echo %s; exit 1; }", shellQuote(part), shellQuote("walkthrough: the error lacks "+part))
			}
		}
		out = append(out, check)
	}
	return strings.Join(out, "\n")
}

// shellQuote quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// guideWalk is a guide whose walkthrough the test runs.
type guideWalk struct {
	page   string // below the module root
	config string // the server's config
	needs  func(t *testing.T)
	// server, when set, gives the server's options instead of config.
	server func(t *testing.T) serverOpts
	// prepare readies the folder the walkthrough runs in, for one that
	// runs in the repository's folder (without writing to it).
	prepare func(t *testing.T, root, work string)
	// check looks, after the walkthrough, at what it says happened; out
	// is what its blocks printed.
	check func(t *testing.T, s *server, work, page, out string)
}

// guideSMTP is the SMTP server of the schedules-and-notifications
// walkthrough (its server func starts it, its check reads it).
var guideSMTP *testsmtp.Server

// guideWalks are the guides with a walkthrough.
var guideWalks = []guideWalk{
	{page: "docs/getting-started.md", config: fastJobsConfig},
	{page: "docs/guides/pipelines.md", config: fastJobsConfig, needs: python3, check: func(t *testing.T, s *server, work, page, out string) {
		wantFile(t, filepath.Join(work, "out", "try-pipeline-train", "model_output", "model.txt"), "trained on 3 rows for 3 epochs\n")
	}},
	{page: "docs/guides/sweeps.md", config: fastJobsConfig, needs: python3, check: func(t *testing.T, s *server, work, page, out string) {
		if best := strings.TrimSpace(mustRun(t, s.env, "job", "show", "-n", "try-sweep", "--query", "best_child_run_id", "-o", "tsv")); best != "try-sweep-trial-2" {
			t.Errorf("the sweep's best trial is %q, the guide says try-sweep-trial-2", best)
		}
	}},
	{page: "docs/guides/batch-inference.md", config: fastJobsConfig, needs: python3, check: func(t *testing.T, s *server, work, page, out string) {
		// The guide's two walkthroughs: the parallel step's rows (each
		// file's name and length) and the batch endpoint's predictions
		// (twice the length, the model's weight).
		for i := 1; i <= 10; i++ {
			if !strings.Contains(out, fmt.Sprintf("file%d.txt %d\n", i, i)) {
				t.Errorf("the parallel step's rows lack file%d.txt %d", i, i)
			}
			if !strings.Contains(out, fmt.Sprintf("file%d.txt,%d\n", i, 2*i)) {
				t.Errorf("the endpoint's predictions lack file%d.txt,%d", i, 2*i)
			}
		}
	}},
	{page: "docs/guides/metrics.md", config: fastJobsConfig, needs: python3, check: func(t *testing.T, s *server, work, page, out string) {
		if got := mustRun(t, s.env, "job", "show", "-n", "try-metrics", "--metrics", "-o", "tsv"); !strings.HasPrefix(got, "loss\t0.333") || !strings.Contains(got, "\t3\n") {
			t.Errorf("the job's metrics: %q, want loss logged 3 times", got)
		}
	}},
	{page: "docs/guides/serverless.md", config: fastJobsConfig},
	{page: "docs/guides/cost-and-budgets.md", config: fastJobsConfig},
	{page: "docs/guides/environments.md", config: fastJobsConfig},
	{page: "docs/guides/data-assets.md", config: fastJobsConfig},
	{page: "docs/guides/data.md", check: func(t *testing.T, s *server, work, page, out string) {
		// The walkthrough's datastore credential went in through the real
		// binary: no output and no line of the server's log holds it.
		log, err := os.ReadFile(s.logPath)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "minio-secret-key") || strings.Contains(string(log), "minio-secret-key") {
			t.Error("the datastore's secret_access_key came out of the CLI or the server's log")
		}
		if !strings.Contains(out, "access_key") || !strings.Contains(out, "team_bucket") {
			t.Errorf("the walkthrough did not show the datastore:\n%s", out)
		}
	}},
	{page: "docs/guides/schedules-and-notifications.md", needs: python3, server: func(t *testing.T) serverOpts {
		// The guide's notifications: section, but for the port of the
		// real SMTP server (Debian's aiosmtpd) this test starts; the
		// check reads the mail it received.
		guideSMTP = testsmtp.Start(t)
		return serverOpts{Config: fastJobsConfig + fmt.Sprintf("notifications:\n  smtp: {host: %s, port: %d, from: \"Shoal <shoal@example.com>\"}\n"+
			"  allow_private_webhook_urls: true\n  allow_http_webhook_urls: true\n  queue_wait_threshold: 10s\n", guideSMTP.Host, guideSMTP.Port)}
	}, check: func(t *testing.T, s *server, work, page, out string) {
		// The schedule's job ran; the receiver accepted (signature
		// checked) both events; each job's mail reached its addresses.
		if !strings.Contains(out, "nightly report, run nightly-report-") {
			t.Errorf("the schedule's job did not print its name:\n%s", out)
		}
		for _, want := range []string{`"event": "job_failed", "job": "failing-report"`, `"event": "job_queued_too_long", "job": "waiting-report"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the receiver did not accept %s:\n%s", want, out)
			}
		}
		got := map[string]string{}
		for len(got) < 2 {
			m := guideSMTP.Next(t, 60*time.Second)
			got[strings.Join(m.To, ",")] = m.Data
		}
		if m := got["ml-team@example.com"]; !strings.Contains(m, "Subject: [Shoal] Job failing-report failed") {
			t.Errorf("the failed job's mail:\n%s", m)
		}
		if m := got["oncall@example.com"]; !strings.Contains(m, "waiting-report") || !strings.Contains(m, "paused") {
			t.Errorf("the waiting job's mail does not name it and its wait (the paused window):\n%s", m)
		}
	}},
	{page: "docs/guides/containers.md", server: func(t *testing.T) serverOpts {
		// The image is the container tests' base (Debian and python3) in
		// their registry on 127.0.0.1, which the guide's config maps the
		// curated name to; without podman and its set-up the test skips.
		env := testctr.Shared(t)
		return serverOpts{Config: fastJobsConfig + "curated_environments:\n  sklearn-1.5: " + env.Registry.Addr + "/" + testctr.PushedBase + "\n",
			Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}}
	}, check: func(t *testing.T, s *server, work, page, out string) {
		if !strings.Contains(out, "in a container") || !strings.Contains(out, "podman") {
			t.Errorf("the job did not say it ran in a container, or the host's engine is not shown:\n%s", out)
		}
	}},
	{page: "docs/guides/idle-timeouts.md", prepare: func(t *testing.T, root, work string) {
		// The guide runs in the repository's folder: the trace is read
		// there, the plot written into docs/sim, here a copy's.
		if err := os.Symlink(filepath.Join(root, "sim"), filepath.Join(work, "sim")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(work, "docs", "sim"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(filepath.Join(root, "docs", "sim", "gpu-cluster.yml"), filepath.Join(work, "docs", "sim", "gpu-cluster.yml")); err != nil {
			t.Fatal(err)
		}
	}, check: func(t *testing.T, s *server, work, page, out string) {
		// The table the page shows is the one the command prints.
		_, table, _ := strings.Cut(page, "```text\n")
		table, _, _ = strings.Cut(table, "```")
		if strings.Count(table, "\n") < 5 {
			t.Fatalf("the page shows no table: %q", table)
		}
		for _, l := range strings.Split(strings.TrimSpace(table), "\n") {
			if !strings.Contains(out, strings.TrimRight(l, " ")) {
				t.Errorf("the page's table line %q is not what shoal sim printed", l)
			}
		}
		// And the plot it shows is the one the command draws.
		root, _ := moduleRoot()
		drawn, err := os.ReadFile(filepath.Join(work, "docs", "sim", "alibaba-1gpu.svg"))
		shown, err2 := os.ReadFile(filepath.Join(root, "docs", "sim", "alibaba-1gpu.svg"))
		if err != nil || err2 != nil || string(drawn) != string(shown) {
			t.Errorf("docs/sim/alibaba-1gpu.svg is not the plot shoal sim draws (%d bytes, %v; shown %d bytes, %v)", len(drawn), err, len(shown), err2)
		}
	}},
}

func python3(t *testing.T) { testenv.Python3(t) }

// TestGuideWalkthroughs runs each guide's walkthrough against a server of
// its own.
func TestGuideWalkthroughs(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guideWalks {
		t.Run(strings.TrimSuffix(filepath.Base(g.page), ".md"), func(t *testing.T) {
			t.Parallel()
			page, err := os.ReadFile(filepath.Join(root, g.page))
			if err != nil {
				t.Fatal(err)
			}
			steps := walkthrough(string(page))
			runs := 0
			for _, s := range steps {
				if s.run {
					runs++
				}
			}
			if runs == 0 {
				t.Fatalf("%s has no walkthrough: no sh block marked <!-- run -->", g.page)
			}
			if g.needs != nil {
				g.needs(t)
			}
			opts := serverOpts{Config: g.config}
			if g.server != nil {
				opts = g.server(t)
			}
			s := startServer(t, opts)
			work := t.TempDir()
			if g.prepare != nil {
				g.prepare(t, root, work)
			}
			var printed strings.Builder
			env := append(append([]string{}, s.env...), "PATH="+filepath.Dir(shoalBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			for _, st := range steps {
				if !st.run {
					p := filepath.Join(work, filepath.FromSlash(st.file))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(st.text), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", withExpectedErrors(st.text))
				cmd.Dir, cmd.Env = work, env
				out, err := cmd.CombinedOutput()
				cancel()
				if err != nil {
					t.Fatalf("%s:%d: the walkthrough's block failed: %v\n%s", g.page, st.line, err, out)
				}
				t.Logf("%s:%d:\n%s", g.page, st.line, out)
				printed.Write(out)
			}
			if g.check != nil {
				g.check(t, s, work, string(page), printed.String())
			}
		})
	}
}

// The markers are read as documented, and an expected error is checked.
func TestWalkthroughMarkers(t *testing.T) {
	page := "x\n<!-- run -->\n```sh\necho a\n```\n\n```sh\necho not run\n```\n<!-- file: src/a.py -->\n\n```python\nprint(1)\n```\n"
	steps := walkthrough(page)
	if len(steps) != 2 || !steps[0].run || steps[0].text != "echo a\n" || steps[1].file != "src/a.py" || steps[1].text != "print(1)\n" {
		t.Fatalf("%+v", steps)
	}
	for block, ok := range map[string]bool{
		"echo 'ERROR: size cannot change' >&2; false  # ERROR: ... cannot change": true,
		"echo 'ERROR: other' >&2; false  # ERROR: ... cannot change":              false,
		"true  # ERROR: ... cannot change":                                        false,
	} {
		err := exec.Command("bash", "-euo", "pipefail", "-c", withExpectedErrors(block)).Run()
		if (err == nil) != ok {
			t.Errorf("%q: %v", block, err)
		}
	}
}

// wantFile fails the test unless the file at path holds want.
func wantFile(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s: %q, %v; want %q", path, b, err, want)
	}
}

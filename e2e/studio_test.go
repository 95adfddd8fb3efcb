package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is Debian's headless browser (scripts/test installs it).
const chromium = "/usr/bin/chromium"

// artifactDir is where the browser tests write their screenshots:
// $SHOAL_ARTIFACTS/studio, default artifacts/studio at the repository's
// root (CI keeps it; git ignores it).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("SHOAL_ARTIFACTS")
	if dir == "" {
		dir, _ = filepath.Abs("../artifacts")
	}
	dir = filepath.Join(dir, "studio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless Chromium of its own (its own profile, so its
// own cookies) and returns a context that drives it.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s not found: apt-get install chromium (scripts/test does)", chromium)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 6*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx
}

func browse(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Run(c, actions...); err != nil {
		var loc string
		chromedp.Run(ctx, chromedp.Location(&loc))
		t.Fatalf("%s: %v (at %s)", what, err, loc)
	}
}

// open navigates to url and waits for sel, retrying a navigation the page
// itself interrupted: the studio reloads a page three seconds after a state
// change, and Chromium reports a navigation racing that reload as "Not
// attached to an active page".
func open(t *testing.T, ctx context.Context, what, url, sel string) {
	t.Helper()
	var err error
	for try := 0; try < 4; try++ {
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		err = chromedp.Run(c, chromedp.Navigate(url), chromedp.WaitVisible(sel))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Not attached to an active page") && !strings.Contains(err.Error(), "net::ERR_ABORTED") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: %v (navigating to %s)", what, err, url)
}

// js evaluates an expression in the page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	var out T
	browse(t, ctx, "evaluate "+expr, chromedp.Evaluate(expr, &out, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
	return out
}

// waitJS polls a boolean expression until it holds.
func waitJS(t *testing.T, ctx context.Context, timeout time.Duration, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		_ = chromedp.Run(ctx, chromedp.Evaluate("!!("+expr+")", &ok))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var body, loc string
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := chromedp.Run(c, chromedp.Location(&loc), chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 3000) : ""`, &body))
			cancel()
			var png []byte
			if chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)) == nil {
				os.WriteFile(filepath.Join(artifactDir(t), "failed-"+t.Name()+".png"), png, 0o644)
			}
			t.Fatalf("waiting for %s (%s) at %s (%v); the page says:\n%s", what, expr, loc, err, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// shot saves a full-page screenshot as <name>.png in the artifacts.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	browse(t, ctx, "screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.WriteFile(filepath.Join(artifactDir(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signIn signs a browser in with an API token through the sign-in form.
func signIn(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	browse(t, ctx, "sign in", chromedp.Navigate(base+"/computes"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", token), chromedp.Click("#signin"), chromedp.WaitVisible("#main h1"))
	waitJS(t, ctx, 10*time.Second, "the compute page after sign-in", `location.pathname === "/computes"`)
}

// TestStudio drives the studio in headless Chromium as a data scientist
// and an operator would: sign in, create a cluster through the form (a
// validation error first), watch a job submitted from the CLI run to
// Completed with its log streaming, create an instance, stop and start
// it with the buttons, edit a schedule, open its custom application
// through the proxy; a Reader sees no create button and is refused if
// they post anyway; a session cookie without the CSRF token changes
// nothing. Every page is screenshotted into the artifacts.
func TestStudio(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	admin := s.adminToken(t)
	ctx := browser(t)

	// The sign-in page, and a wrong token.
	open(t, ctx, "sign-in page", s.url+"/jobs", "#token")
	shot(t, ctx, "signin")
	browse(t, ctx, "a wrong token", chromedp.SendKeys("#token", "shoal_wrong"), chromedp.Click("#signin"), chromedp.WaitVisible("#signin-error"))
	signIn(t, ctx, s.url, admin)
	shot(t, ctx, "computes")

	// A cluster through the form: min above max first.
	browse(t, ctx, "the cluster form", chromedp.Click("#new-cluster"), chromedp.WaitVisible("#compute-form"))
	browse(t, ctx, "fill the form wrongly", chromedp.SendKeys("#f-name", "web-cpu"),
		chromedp.SetValue("#f-min", "3"), chromedp.SetValue("#f-max", "1"), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the validation error next to the field",
		`(document.getElementById("err-min_instances").textContent + document.getElementById("err-max_instances").textContent).includes("max_instances")`)
	shot(t, ctx, "cluster-form-error")
	browse(t, ctx, "fix the form", chromedp.SetValue("#f-min", "0"), chromedp.SetValue("#f-max", "2"), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the cluster page", `location.pathname === "/computes/web-cpu"`)
	if c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "web-cpu", "-o", "json"); c["max_instances"] != float64(2) {
		t.Fatalf("the form's cluster: %v", c)
	}

	// A job from the CLI, watched on its page to Completed, its log streaming.
	job := writeJobFile(t, "command: echo hello-from-the-studio; sleep 3; echo goodbye\ncompute: web-cpu\n")
	name := strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", job, "--query", "name", "-o", "tsv"))
	open(t, ctx, "the job page", s.url+"/jobs/"+name, "#status")
	waitJS(t, ctx, 90*time.Second, "the log streaming while the job runs", `document.getElementById("log").textContent.includes("hello-from-the-studio")`)
	waitJS(t, ctx, 90*time.Second, "the job Completed on its page", `document.getElementById("status").textContent.trim() === "Completed"`)
	waitJS(t, ctx, 30*time.Second, "the page reloaded for the ended job, its whole log read",
		`!document.getElementById("cancel") && document.getElementById("log").dataset.done === "true" && document.getElementById("log").textContent.includes("goodbye")`)
	shot(t, ctx, "job")
	open(t, ctx, "the cluster page with its node", s.url+"/computes/web-cpu", "svg.chart")
	shot(t, ctx, "cluster")

	// An instance through the form, with a custom application.
	port := strconv.Itoa(freePort(t))
	open(t, ctx, "the instances tab", s.url+"/computes?tab=instances", "#new-instance")
	browse(t, ctx, "the instance form", chromedp.Click("#new-instance"), chromedp.WaitVisible("#compute-form"),
		chromedp.SendKeys("#f-name", "studio-ci"), chromedp.SendKeys("#f-app", "files"),
		chromedp.SendKeys("#f-app-cmd", "python3 -m http.server "+port+" --bind 127.0.0.1"),
		chromedp.SendKeys("#f-app-target", port), chromedp.SendKeys("#f-app-pub", port), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the instance page", `location.pathname === "/computes/studio-ci"`)
	waitJS(t, ctx, 120*time.Second, "the instance Running (live)", `document.getElementById("state").textContent.trim() === "Running"`)
	browse(t, ctx, "stop", chromedp.Click("#stop"))
	waitJS(t, ctx, 120*time.Second, "Stopped after the stop button", `document.getElementById("state").textContent.trim() === "Stopped"`)
	browse(t, ctx, "start", chromedp.Click("#start"))
	waitJS(t, ctx, 120*time.Second, "Running after the start button", `document.getElementById("state").textContent.trim() === "Running"`)

	// A schedule: stop at 19:00 on weekdays, Pacific time.
	browse(t, ctx, "edit a schedule", chromedp.SetValue("#s0-action", "Stop"), chromedp.SetValue("#s0-type", "Cron"),
		chromedp.SetValue("#s0-expr", "0 19 * * 1-5"), chromedp.SetValue("#s0-tz", "Pacific Standard Time"), chromedp.Click("#save-schedules"))
	waitFor(t, 15*time.Second, "the schedule stored", func() (bool, string) {
		c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")
		got := fmt.Sprint(c["schedules"])
		return strings.Contains(got, "0 19 * * 1-5") && strings.Contains(got, "Pacific Standard Time"), got
	})
	waitJS(t, ctx, 15*time.Second, "the page showing the schedule", `document.getElementById("s0-expr").value === "0 19 * * 1-5"`)

	// The custom application through the proxy link.
	waitFor(t, 60*time.Second, "the application ready", func() (bool, string) {
		c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")
		return strings.Contains(fmt.Sprint(c["applications"]), "ready:true"), fmt.Sprint(c["applications"])
	})
	open(t, ctx, "reload", s.url+"/computes/studio-ci", `a[data-app="files"]`)
	shot(t, ctx, "instance")
	href := js[string](t, ctx, `document.querySelector('a[data-app="files"]').href`)
	open(t, ctx, "open the application", href, "body")
	waitJS(t, ctx, 20*time.Second, "the application's page through the proxy", `document.body.innerText.includes("Directory listing")`)

	// Every page, screenshotted.
	for shotName, path := range map[string]string{
		"computes-instances": "/computes?tab=instances", "cluster-new": "/computes/new", "instance-new": "/computes/new?type=instance",
		"cluster-edit": "/computes/web-cpu/edit", "instance-edit": "/computes/studio-ci/edit", "jobs": "/jobs", "quota": "/quota", "audit": "/audit", "users": "/users",
	} {
		open(t, ctx, "page "+path, s.url+path, "#main h1")
		shot(t, ctx, shotName)
	}

	// A session cookie without the CSRF header changes nothing.
	status := js[int](t, ctx, `fetch("/api/v1/workspaces/default/computes/web-cpu", {method: "DELETE", credentials: "same-origin"}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("DELETE with the session cookie and no CSRF token: %d, want 403", status)
	}
	if _, stderr, code := run(t, s.env, "compute", "show", "-n", "web-cpu", "-o", "none"); code != 0 {
		t.Errorf("the cluster is gone after a forged DELETE: %s", stderr)
	}

	// A Reader: no create button; a post anyway is refused.
	mustRun(t, s.env, "user", "create", "--name", "rita", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "rita", "--role", "Reader", "-o", "none")
	rita := strings.TrimSpace(mustRun(t, s.env, "token", "create", "--user", "rita", "--name", "studio", "--query", "token", "-o", "tsv"))
	rctx := browser(t)
	signIn(t, rctx, s.url, rita)
	if js[bool](t, rctx, `!!document.getElementById("new-cluster")`) {
		t.Error("a Reader sees the create button")
	}
	open(t, rctx, "instances tab", s.url+"/computes?tab=instances", "#instances")
	if js[bool](t, rctx, `!!document.getElementById("new-instance")`) {
		t.Error("a Reader sees the new-instance button")
	}
	status = js[int](t, rctx, `fetch("/api/v1/workspaces/default/computes/reader-made", {method: "PUT", credentials: "same-origin",
		headers: {"Content-Type": "application/json", "X-CSRF-Token": document.cookie.match(/shoal_csrf=([^;]*)/)[1]},
		body: JSON.stringify({size: "Standard_DS3_v2", max_instances: 1})}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("a Reader's PUT with a valid session and CSRF token: %d, want 403", status)
	}
	open(t, rctx, "a Reader at the instance", s.url+"/computes/studio-ci", "#not-owner")
	if js[bool](t, rctx, `!!document.getElementById("stop")`) {
		t.Error("a Reader sees the instance's stop button")
	}
}

// TestStudioLinks crawls the studio from / as a signed-in administrator:
// every link, stylesheet and script on every page answers 200.
func TestStudioLinks(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	admin := s.adminToken(t)
	mustRun(t, s.env, "compute", "create", "--name", "crawl-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1", "-o", "none")
	job := writeJobFile(t, "command: echo crawled\ncompute: crawl-cpu\n")
	mustRun(t, s.env, "job", "create", "-f", job, "-o", "none")
	jar := &cookieJar{cookies: []*http.Cookie{{Name: "shoal_session", Value: admin}}}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ref := regexp.MustCompile(`(?:href|src)="([^"#]*)"`)
	seen := map[string]bool{}
	queue := []string{"/"}
	pages := 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		resp, err := client.Get(s.url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther:
			loc, _ := url.Parse(resp.Header.Get("Location"))
			queue = append(queue, loc.RequestURI())
			continue
		case resp.StatusCode != http.StatusOK:
			t.Errorf("GET %s: %d", p, resp.StatusCode)
			continue
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		pages++
		for _, m := range ref.FindAllStringSubmatch(string(body), -1) {
			u, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			if err != nil || (u.Host != "" && u.Host != strings.TrimPrefix(s.url, "http://")) || u.Path == "" {
				continue
			}
			// Job logs stream (and outputs download) from the API; the
			// crawl reads pages and their assets.
			if strings.HasPrefix(u.Path, "/api/") {
				continue
			}
			queue = append(queue, u.RequestURI())
		}
	}
	if pages < 8 {
		t.Errorf("crawled %d pages, want every page of the studio (%v)", pages, seen)
	}
}

// cookieJar sends a fixed session cookie to the test server.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie     { return j.cookies }

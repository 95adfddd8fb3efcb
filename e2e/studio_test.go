package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/shoal-ml/shoal/internal/testenv"
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
	testenv.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// Bounded by the test binary's own deadline, not a fixed six
	// minutes: under a loaded machine (the e2e package's tests run in
	// parallel on 2 cores) a studio test outlived that bound after its
	// work was done, and its last page failed with the browser's
	// context expired (TestStudioSchedule, 2026-12-02).
	deadline := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel3 := context.WithDeadline(ctx, deadline)
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
		// A try that ran out its own minute (a page slow to come on a
		// loaded machine) is tried again while the browser lives.
		timedOut := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		if !timedOut && !strings.Contains(err.Error(), "Not attached to an active page") && !strings.Contains(err.Error(), "net::ERR_ABORTED") {
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
// A page just navigated to may not be laid out yet: Chromium refuses to
// capture it ("Cannot take screenshot with 0 width"), so that is retried
// for a few seconds.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := chromedp.Run(c, chromedp.FullScreenshot(&png, 100))
		cancel()
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "0 width") || time.Now().After(deadline) {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
	dialogs := acceptDialogs(ctx)

	// The sign-in page, and a wrong token.
	open(t, ctx, "sign-in page", s.url+"/jobs", "#token")
	shot(t, ctx, "signin")
	browse(t, ctx, "a wrong token", chromedp.SendKeys("#token", "shoal_wrong"), chromedp.Click("#signin"), chromedp.WaitVisible("#signin-error"))
	signIn(t, ctx, s.url, admin)
	shot(t, ctx, "computes")

	// A cluster through the form: min above max first. The identity it
	// will name is an administrator's, made before the form is opened so
	// that the form offers it.
	mustRun(t, s.env, "identity", "create", "--name", "studio-id", "-o", "none")
	browse(t, ctx, "the cluster form", chromedp.Click("#new-cluster"), chromedp.WaitVisible("#compute-form"))
	browse(t, ctx, "fill the form wrongly", chromedp.SendKeys("#f-name", "web-cpu"),
		chromedp.SetValue("#f-min", "3"), chromedp.SetValue("#f-max", "1"), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the validation error next to the field",
		`(document.getElementById("err-min_instances").textContent + document.getElementById("err-max_instances").textContent).includes("max_instances")`)
	shot(t, ctx, "cluster-form-error")

	// Its advanced settings, as the seed's: SSH access (an admin user and
	// a key or a password) and a managed identity. Each wrong value is
	// refused by the API with its message next to its field.
	pub, err := os.ReadFile(sshKey(t, "studio") + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(pub))
	browse(t, ctx, "fix the scale, enable SSH with a reserved admin name", chromedp.SetValue("#f-min", "0"), chromedp.SetValue("#f-max", "2"),
		chromedp.Click("#f-ssh"), chromedp.WaitVisible("#f-admin"), chromedp.SetValue("#f-admin", "root"), chromedp.SetValue("#f-key", key), chromedp.Click("#create"))
	fieldError(t, ctx, "ssh_settings.admin_username", "reserved")
	choose(t, ctx, "#f-auth", "password")
	browse(t, ctx, "a password too short", chromedp.SetValue("#f-admin", "azureuser"), chromedp.WaitVisible("#f-password"),
		chromedp.SetValue("#f-password", "Short1!"), chromedp.Click("#create"))
	fieldError(t, ctx, "ssh_settings.admin_password", "12 to 123")
	choose(t, ctx, "#f-auth", "key")
	choose(t, ctx, "#f-identity", "user_assigned")
	browse(t, ctx, "a user-assigned identity without its name", chromedp.Click("#create"))
	fieldError(t, ctx, "identity.user_assigned_identities", "at least one")
	// The error focuses its field, and a focused field with suggestions
	// opens them over the form: the screenshot is of the form.
	js[bool](t, ctx, `document.activeElement.blur(), true`)
	shot(t, ctx, "cluster-form-advanced")
	choose(t, ctx, "#f-identity", "system_assigned,user_assigned")
	browse(t, ctx, "name the identity and create", chromedp.SetValue("#f-identities", "studio-id"), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the cluster page", `location.pathname === "/computes/web-cpu"`)
	var cluster struct {
		MaxInstances int  `json:"max_instances"`
		SSH          bool `json:"ssh_public_access_enabled"`
		SSHSettings  struct {
			AdminUsername string `json:"admin_username"`
			SSHKeyValue   string `json:"ssh_key_value"`
		} `json:"ssh_settings"`
		Identity struct {
			Type string `json:"type"`
			User []struct {
				ResourceID string `json:"resource_id"`
			} `json:"user_assigned_identities"`
		} `json:"identity"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, s.env, "compute", "show", "-n", "web-cpu", "-o", "json")), &cluster); err != nil {
		t.Fatal(err)
	}
	// The password field was hidden when the key was chosen again: it is
	// not sent (a cluster with both would have been stored as well).
	if cluster.MaxInstances != 2 || !cluster.SSH || cluster.SSHSettings.AdminUsername != "azureuser" || cluster.SSHSettings.SSHKeyValue != key ||
		cluster.Identity.Type != "system_assigned,user_assigned" || len(cluster.Identity.User) != 1 || cluster.Identity.User[0].ResourceID != "studio-id" {
		t.Fatalf("the form's cluster: %+v", cluster)
	}
	if got := js[string](t, ctx, `document.getElementById("ssh-access").textContent + " | " + document.getElementById("identity").textContent`); !strings.Contains(got, "azureuser") || !strings.Contains(got, "studio-id") {
		t.Errorf("the cluster page's SSH and identity: %q", got)
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

	// The cluster page busy: three jobs on a cluster of at most two nodes,
	// so two run and one waits with its reason. Each node has its SSH
	// connection string (the cluster's admin user at the node's address
	// and the port its SSH server listens on, as list-nodes gives them).
	busy := writeJobFile(t, "command: sleep 300\ncompute: web-cpu\n")
	var busyJobs []string
	for range 3 {
		busyJobs = append(busyJobs, strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", busy, "--query", "name", "-o", "tsv")))
	}
	waitFor(t, 90*time.Second, "two jobs running and one queued with its reason", func() (bool, string) {
		var states []string
		running, queued := 0, 0
		for _, j := range busyJobs {
			v := runJSON[map[string]any](t, s.env, "job", "show", "-n", j, "-o", "json")
			states = append(states, fmt.Sprint(v["status"], ": ", v["status_reason"]))
			switch {
			case v["status"] == "Running":
				running++
			case v["status"] == "Queued" && strings.Contains(fmt.Sprint(v["status_reason"]), "max_instances"):
				queued++
			}
		}
		return running == 2 && queued == 1, strings.Join(states, "; ")
	})
	var nodes []struct {
		ID   string `json:"node_id"`
		IP   string `json:"private_ip_address"`
		Port int    `json:"ssh_port"`
	}
	waitFor(t, 30*time.Second, "both nodes serving SSH", func() (bool, string) {
		out := mustRun(t, s.env, "compute", "list-nodes", "-n", "web-cpu", "-o", "json")
		if err := json.Unmarshal([]byte(out), &nodes); err != nil || len(nodes) != 2 {
			return false, out
		}
		return nodes[0].Port > 0 && nodes[1].Port > 0, out
	})
	open(t, ctx, "the busy cluster page", s.url+"/computes/web-cpu", "svg.chart")
	waitJS(t, ctx, 30*time.Second, "two nodes with connection strings and the queued job's reason",
		`document.querySelectorAll("#nodes .node-ssh").length === 2 && document.getElementById("queued").textContent.includes("max_instances")`)
	for _, n := range nodes {
		want := fmt.Sprintf("ssh azureuser@%s -p %d", n.IP, n.Port)
		if got := js[string](t, ctx, `(document.querySelector('#nodes tr[data-node="`+n.ID+`"] .node-ssh') || {}).textContent || ""`); got != want {
			t.Errorf("node %s's connection string: %q, want %q", n.ID, got, want)
		}
	}
	shot(t, ctx, "cluster")
	for _, j := range busyJobs {
		mustRun(t, s.env, "job", "cancel", "-n", j, "-o", "none")
	}

	// An instance for another user, through the form: single sign-on
	// off, a user-assigned identity, idle shutdown after 30 minutes. (No
	// setup script and no application, so that SSO is off because the
	// box was unticked, not because Azure's rule for those turned it off.)
	users := withUsers(t, s, map[string]string{"cody": "Contributor", "rita": "Reader"})
	open(t, ctx, "the instance form", s.url+"/computes/new?type=instance", "#compute-form")
	browse(t, ctx, "an instance for cody", chromedp.SendKeys("#f-name", "cody-ci"), chromedp.SetValue("#f-user", "cody"),
		chromedp.SetValue("#f-idle-ci", "30"), chromedp.Click("#f-sso"))
	choose(t, ctx, "#f-identity", "user_assigned")
	browse(t, ctx, "create it", chromedp.SetValue("#f-identities", "studio-id"), chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "cody's instance page", `location.pathname === "/computes/cody-ci"`)
	var cody struct {
		User     string `json:"assigned_user"`
		Idle     int    `json:"idle_time_before_shutdown_minutes"`
		SSO      *bool  `json:"enable_sso"`
		Identity struct {
			Type string `json:"type"`
			User []struct {
				ResourceID string `json:"resource_id"`
			} `json:"user_assigned_identities"`
		} `json:"identity"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, s.env, "compute", "show", "-n", "cody-ci", "-o", "json")), &cody); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cody.User, "cody") || cody.Idle != 30 || cody.SSO == nil || *cody.SSO || cody.Identity.Type != "user_assigned" ||
		len(cody.Identity.User) != 1 || cody.Identity.User[0].ResourceID != "studio-id" {
		t.Fatalf("the form's instance for cody: %+v (enable_sso %v)", cody, cody.SSO)
	}
	if got := js[string](t, ctx, `document.getElementById("sso").textContent + " | " + document.getElementById("identity").textContent`); got != "off | user_assigned: studio-id" {
		t.Errorf("cody's instance page shows SSO and identity as %q", got)
	}
	// It has served its purpose: its machine is not needed for the rest.
	mustRun(t, s.env, "compute", "delete", "-n", "cody-ci", "--yes", "-o", "none")

	// An instance through the form, with SSH, a custom application, a
	// setup script, a schedule (a start two days from now, so that it
	// does not fire during the test) and a system-assigned identity.
	port := strconv.Itoa(freePort(t))
	day := time.Now().UTC().Add(48 * time.Hour).Weekday().String()
	open(t, ctx, "the instances tab", s.url+"/computes?tab=instances", "#new-instance")
	browse(t, ctx, "the instance form", chromedp.Click("#new-instance"), chromedp.WaitVisible("#compute-form"),
		chromedp.SendKeys("#f-name", "studio-ci"), chromedp.Click("#f-ssh"), chromedp.SetValue("#f-key", key),
		chromedp.SendKeys("#f-setup", "echo set-up-by-the-studio"),
		chromedp.SetValue("#n0-action", "Start"), chromedp.SetValue("#n0-time", "07:30"), chromedp.Click(`#new-schedules [data-row="0"] input[value="`+day+`"]`),
		chromedp.SendKeys("#f-app", "files"),
		chromedp.SendKeys("#f-app-cmd", "python3 -m http.server "+port+" --bind 127.0.0.1"),
		chromedp.SendKeys("#f-app-target", port), chromedp.SendKeys("#f-app-pub", port))
	choose(t, ctx, "#f-identity", "system_assigned")
	shot(t, ctx, "instance-form")
	browse(t, ctx, "create the instance", chromedp.Click("#create"))
	waitJS(t, ctx, 10*time.Second, "the instance page", `location.pathname === "/computes/studio-ci"`)
	var ci struct {
		Identity struct {
			Type string `json:"type"`
		} `json:"identity"`
		SSO       bool `json:"enable_sso"`
		Schedules struct {
			List []struct {
				Action  string `json:"action"`
				Trigger struct {
					Frequency string `json:"frequency"`
					TimeZone  string `json:"time_zone"`
					Schedule  struct {
						Hours    []int    `json:"hours"`
						Minutes  []int    `json:"minutes"`
						WeekDays []string `json:"week_days"`
					} `json:"schedule"`
				} `json:"trigger"`
			} `json:"compute_start_stop"`
		} `json:"schedules"`
		Setup struct {
			Creation struct {
				Command string `json:"command"`
			} `json:"creation_script"`
		} `json:"setup_scripts"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")), &ci); err != nil {
		t.Fatal(err)
	}
	if sc := ci.Schedules.List; ci.Identity.Type != "system_assigned" || !ci.SSO || ci.Setup.Creation.Command != "echo set-up-by-the-studio" || len(sc) != 1 ||
		!strings.EqualFold(sc[0].Action, "start") || !strings.EqualFold(sc[0].Trigger.Frequency, "week") || sc[0].Trigger.TimeZone != "UTC" ||
		!slices.Equal(sc[0].Trigger.Schedule.Hours, []int{7}) || !slices.Equal(sc[0].Trigger.Schedule.Minutes, []int{30}) || !slices.Equal(sc[0].Trigger.Schedule.WeekDays, []string{day}) {
		t.Fatalf("the form's instance: %+v", ci)
	}
	// From here the page must not navigate: the SSH string and the
	// application's link come by the live refresh of their parts.
	js[bool](t, ctx, `window.stayed = true`)
	waitJS(t, ctx, 120*time.Second, "the instance Running (live)", `document.getElementById("state").textContent.trim() === "Running"`)
	browse(t, ctx, "stop", chromedp.Click("#stop"))
	waitJS(t, ctx, 120*time.Second, "Stopped after the stop button", `document.getElementById("state").textContent.trim() === "Stopped"`)
	browse(t, ctx, "start", chromedp.Click("#start"))
	waitJS(t, ctx, 120*time.Second, "Running after the start button", `document.getElementById("state").textContent.trim() === "Running"`)
	waitJS(t, ctx, 60*time.Second, "the SSH string and the application's link refreshed in place",
		`window.stayed && document.getElementById("ssh") && document.getElementById("ssh").textContent.startsWith("ssh azureuser@") && document.querySelector('#apps a[data-app="files"]')`)
	waitJS(t, ctx, 30*time.Second, "the setup script's output in its log", `document.getElementById("setup-log").textContent.includes("set-up-by-the-studio")`)

	// A schedule: stop at 19:00 on weekdays, Pacific time, in the row after
	// the form's.
	browse(t, ctx, "edit a schedule", chromedp.SetValue("#s1-action", "Stop"), chromedp.SetValue("#s1-type", "Cron"),
		chromedp.SetValue("#s1-expr", "0 19 * * 1-5"), chromedp.SetValue("#s1-tz", "Pacific Standard Time"), chromedp.Click("#save-schedules"))
	waitFor(t, 15*time.Second, "the schedule stored", func() (bool, string) {
		c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")
		got := fmt.Sprint(c["schedules"])
		return strings.Contains(got, "0 19 * * 1-5") && strings.Contains(got, "Pacific Standard Time"), got
	})
	waitJS(t, ctx, 15*time.Second, "the page showing the schedule after the form's", `document.getElementById("s1-expr").value === "0 19 * * 1-5" && document.getElementById("s0-hours").value === "7"`)

	// The custom application through the proxy link.
	waitFor(t, 60*time.Second, "the application ready", func() (bool, string) {
		c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")
		return strings.Contains(fmt.Sprint(c["applications"]), "ready:true"), fmt.Sprint(c["applications"])
	})
	open(t, ctx, "reload", s.url+"/computes/studio-ci", `a[data-app="files"]`)
	waitJS(t, ctx, 10*time.Second, "the SSH string for the screenshot", `document.getElementById("ssh")`)
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
	// Page scripts read no Shoal cookie: the session's is HttpOnly and the
	// CSRF token (bound to the session) comes in the page.
	if c := js[string](t, ctx, `document.cookie`); strings.Contains(c, "shoal_") {
		t.Errorf("document.cookie shows Shoal's cookies: %q", c)
	}
	if _, stderr, code := run(t, s.env, "compute", "show", "-n", "web-cpu", "-o", "none"); code != 0 {
		t.Errorf("the cluster is gone after a forged DELETE: %s", stderr)
	}

	// The cluster's edit form: max_instances changes.
	open(t, ctx, "the cluster's edit form", s.url+"/computes/web-cpu/edit", "#compute-form")
	browse(t, ctx, "edit max_instances", chromedp.SetValue("#f-max", "3"), chromedp.Click("#save"))
	waitJS(t, ctx, 10*time.Second, "the cluster page after the edit", `location.pathname === "/computes/web-cpu"`)
	if c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "web-cpu", "-o", "json"); c["max_instances"] != float64(3) {
		t.Errorf("max_instances after the edit form: %v", c["max_instances"])
	}

	// Delete asks first (the dialog is accepted), then the cluster is gone.
	mustRun(t, s.env, "compute", "create", "--name", "doomed", "--size", "Standard_DS3_v2", "--max-instances", "1", "-o", "none")
	open(t, ctx, "the cluster to delete", s.url+"/computes/doomed", "#delete")
	asked := dialogs.Load()
	browse(t, ctx, "delete", chromedp.Click("#delete"))
	waitJS(t, ctx, 20*time.Second, "the compute list after delete", `location.pathname === "/computes"`)
	if dialogs.Load() == asked {
		t.Error("delete did not ask for confirmation")
	}
	waitFor(t, 30*time.Second, "the deleted cluster gone", func() (bool, string) {
		_, stderr, code := run(t, s.env, "compute", "show", "-n", "doomed", "-o", "none")
		return code != 0, stderr
	})

	// A job canceled with its button (confirmed).
	long := writeJobFile(t, "command: sleep 600\ncompute: web-cpu\n")
	longName := strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", long, "--query", "name", "-o", "tsv"))
	open(t, ctx, "the job to cancel", s.url+"/jobs/"+longName, "#cancel")
	asked = dialogs.Load()
	browse(t, ctx, "cancel", chromedp.Click("#cancel"))
	waitFor(t, 60*time.Second, "the job Canceled", func() (bool, string) {
		st := strings.TrimSpace(mustRun(t, s.env, "job", "show", "-n", longName, "--query", "status", "-o", "tsv"))
		return st == "Canceled", st
	})
	if dialogs.Load() == asked {
		t.Error("cancel did not ask for confirmation")
	}
	open(t, ctx, "the canceled job", s.url+"/jobs/"+longName, "#status")
	waitJS(t, ctx, 30*time.Second, "the page showing Canceled", `document.getElementById("status").textContent.trim() === "Canceled" && !document.getElementById("cancel")`)
	shot(t, ctx, "job-canceled")

	// Idle shutdown saved from the instance page.
	open(t, ctx, "the instance", s.url+"/computes/studio-ci", "#idle-form")
	browse(t, ctx, "set idle shutdown", chromedp.SetValue("#f-idle-min", "30"), chromedp.Click("#save-idle"))
	waitFor(t, 15*time.Second, "the idle shutdown stored", func() (bool, string) {
		c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "studio-ci", "-o", "json")
		return c["idle_time_before_shutdown_minutes"] == float64(30), fmt.Sprint(c["idle_time_before_shutdown_minutes"])
	})

	// The schedules editor keeps what it does not show changed: an
	// instance whose schedules came from the API (lists of hours and
	// minutes, an interval, an IANA zone, odd spellings) has one row
	// edited in the browser; the others come back exactly as they were.
	stored := studioSchedules(t, s, admin, "sched-ci", `{"type": "ComputeInstance", "size": "Standard_DS3_v2", "stopped": true, "schedules": {"compute_start_stop": [
		{"action": "start", "trigger": {"type": "recurrence", "frequency": "Day", "interval": 2, "time_zone": "Europe/Berlin", "schedule": {"hours": [8, 18], "minutes": [0, 30]}}},
		{"action": "stop", "trigger": {"type": "cron", "expression": "0 19 * * 1-5", "time_zone": "America/New_York"}},
		{"action": "start", "state": "disabled", "trigger": {"type": "recurrence", "frequency": "week", "time_zone": "W. Europe Standard Time", "schedule": {"hours": 7, "week_days": ["friday", "Monday"]}}},
		{"action": "stop", "trigger": {"type": "recurrence", "frequency": "Month", "start_time": "2030-01-01T00:00:00", "schedule": {"hours": [20], "month_days": [1, 15]}}}]}}`)
	open(t, ctx, "the instance with API-made schedules", s.url+"/computes/sched-ci", "#schedules")
	if got := js[string](t, ctx, `document.getElementById("s0-tz").value + "|" + document.getElementById("s0-hours").value + "|" + document.getElementById("s0-interval").value`); got != "Europe/Berlin|8,18|2" {
		t.Errorf("row 0 shows %q, want its zone, hours and interval", got)
	}
	shot(t, ctx, "instance-schedules")
	browse(t, ctx, "edit row 1's expression", chromedp.SetValue("#s1-expr", "30 19 * * 1-5"), chromedp.Click("#save-schedules"))
	var after []map[string]any
	waitFor(t, 15*time.Second, "row 1 stored", func() (bool, string) {
		after = studioSchedules(t, s, admin, "sched-ci", "")
		return len(after) == 4 && after[1]["trigger"].(map[string]any)["expression"] == "30 19 * * 1-5", fmt.Sprint(after)
	})
	for _, i := range []int{0, 2, 3} {
		if !reflect.DeepEqual(after[i], stored[i]) {
			t.Errorf("row %d changed when row 1 was saved:\n was %v\n now %v", i, stored[i], after[i])
		}
	}
	if tz := after[1]["trigger"].(map[string]any)["time_zone"]; tz != "America/New_York" {
		t.Errorf("row 1's zone after its edit: %v", tz)
	}
	// An edited row keeps the fields not edited: row 0 disabled only.
	open(t, ctx, "the schedules again", s.url+"/computes/sched-ci", "#schedules")
	browse(t, ctx, "disable row 0", chromedp.Click("#s0-enabled"), chromedp.Click("#save-schedules"))
	waitFor(t, 15*time.Second, "row 0 disabled", func() (bool, string) {
		after = studioSchedules(t, s, admin, "sched-ci", "")
		return len(after) == 4 && after[0]["state"] == "disabled", fmt.Sprint(after)
	})
	want := maps.Clone(stored[0])
	want["state"] = "disabled"
	if !reflect.DeepEqual(after[0], want) {
		t.Errorf("row 0 after disabling it in the editor:\n got %v\nwant %v", after[0], want)
	}

	// Sign-out ends the session: the pages ask for a token again (an API
	// token is not revoked by it: the CLI still works).
	open(t, ctx, "a page", s.url+"/computes", "#who")
	browse(t, ctx, "sign out", chromedp.Click(".who button"))
	waitJS(t, ctx, 10*time.Second, "the sign-in page after sign-out", `location.pathname === "/signin"`)
	open(t, ctx, "a page after sign-out", s.url+"/computes", "#token")
	if status := js[int](t, ctx, `fetch("/api/v1/workspaces/default/computes", {credentials: "same-origin"}).then(r => r.status)`); status != http.StatusUnauthorized {
		t.Errorf("the API with the browser's cookies after sign-out: %d, want 401", status)
	}
	mustRun(t, s.env, "compute", "list", "-o", "none")

	// A Contributor who is not the instance's user: may stop it (the API
	// lets their role), may not use it (no SSH string, no application link).
	signIn(t, ctx, s.url, envToken(users["cody"]))
	open(t, ctx, "a Contributor at another's instance", s.url+"/computes/studio-ci", "#not-owner")
	if got := js[string](t, ctx, `[document.getElementById("stop") ? "stop" : "", document.getElementById("ssh") ? "ssh" : "", document.querySelector("a[data-app]") ? "app link" : ""].join(",")`); got != "stop,," {
		t.Errorf("a Contributor who is not the user sees %q, want the stop button only", got)
	}
	if v := showInstance(t, s.env, "studio-ci"); v.SSHConnectionString == "" {
		t.Error("the instance has no SSH string: hiding it proves nothing")
	}
	shot(t, ctx, "instance-contributor")
	browse(t, ctx, "stop as a Contributor", chromedp.Click("#stop"))
	waitJS(t, ctx, 120*time.Second, "Stopped after a Contributor's stop", `document.getElementById("state").textContent.trim() === "Stopped"`)
	if v := showInstance(t, s.env, "studio-ci"); v.State != "Stopped" {
		t.Errorf("after a Contributor's stop: %s", v)
	}
	open(t, ctx, "a page", s.url+"/computes", "#who")
	browse(t, ctx, "sign out", chromedp.Click(".who button"))
	waitJS(t, ctx, 10*time.Second, "the sign-in page after sign-out", `location.pathname === "/signin"`)

	// A Reader: no create button; a post anyway is refused.
	signIn(t, ctx, s.url, envToken(users["rita"]))
	if js[bool](t, ctx, `!!document.getElementById("new-cluster")`) {
		t.Error("a Reader sees the create button")
	}
	open(t, ctx, "instances tab", s.url+"/computes?tab=instances", "#instances")
	if js[bool](t, ctx, `!!document.getElementById("new-instance")`) {
		t.Error("a Reader sees the new-instance button")
	}
	status = js[int](t, ctx, `fetch("/api/v1/workspaces/default/computes/reader-made", {method: "PUT", credentials: "same-origin",
		headers: {"Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
		body: JSON.stringify({size: "Standard_DS3_v2", max_instances: 1})}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("a Reader's PUT with a valid session and CSRF token: %d, want 403", status)
	}
	open(t, ctx, "a Reader at the instance", s.url+"/computes/studio-ci", "#not-owner")
	if got := js[string](t, ctx, `["start", "stop", "restart", "save-schedules", "idle-form", "delete"].filter((id) => document.getElementById(id)).join(",")`); got != "" {
		t.Errorf("a Reader sees %s", got)
	}
	shot(t, ctx, "instance-reader")
	status = js[int](t, ctx, `fetch("/api/v1/workspaces/default/computes/studio-ci/start", {method: "POST", credentials: "same-origin",
		headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("a Reader's forged start with a valid session and CSRF token: %d, want 403", status)
	}
}

// choose selects value in the <select> sel as a person would: the change
// event fires, so that the form shows the fields that choice needs.
func choose(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q; el.dispatchEvent(new Event("change", {bubbles: true})); return el.value; })()`, sel, value)
	if got := js[string](t, ctx, expr); got != value {
		t.Fatalf("choosing %q in %s: it holds %q", value, sel, got)
	}
}

// fieldError waits for the API's error for field to show next to it (in
// its data-error-for element) with want in its text.
func fieldError(t *testing.T, ctx context.Context, field, want string) {
	t.Helper()
	waitJS(t, ctx, 10*time.Second, "the error next to "+field,
		fmt.Sprintf(`(() => { const el = document.querySelector('[data-error-for=%q]'); return el && el.offsetParent !== null && el.textContent.includes(%q); })()`, field, want))
}

// acceptDialogs accepts every dialog the page opens (the delete and
// cancel buttons confirm first) and counts them.
func acceptDialogs(ctx context.Context) *atomic.Int32 {
	var n atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			n.Add(1)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(true))
		}
	})
	return &n
}

// envToken is the API token of a CLI environment withUsers made.
func envToken(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SHOAL_TOKEN="); ok {
			return v
		}
	}
	return ""
}

// studioSchedules creates instance name with the API body create (when
// not empty) and returns its stored schedules, as JSON objects.
func studioSchedules(t *testing.T, s *server, token, name, create string) []map[string]any {
	t.Helper()
	path := "/api/v1/workspaces/default/computes/" + name
	if create != "" {
		if code, _, body := s.httpDo(t, "PUT", path, token, []byte(create), nil); code != http.StatusCreated && code != http.StatusOK {
			t.Fatalf("creating %s: %d %s", name, code, body)
		}
	}
	code, _, body := s.httpDo(t, "GET", path, token, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, code, body)
	}
	var c struct {
		Schedules struct {
			List []map[string]any `json:"compute_start_stop"`
		} `json:"schedules"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c.Schedules.List
}

// TestStudioLinks crawls the studio from / as a signed-in administrator:
// every link, stylesheet and script on every page answers 200, the API's
// links the pages show (a job's plain log and outputs, an instance's
// application through the proxy) included — a page shows those only
// when they would answer. An instance and ended jobs are there, so that
// the instance page, its edit form and its application link are crawled,
// and the job pages hold their logs without JavaScript.
func TestStudioLinks(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	admin := s.adminToken(t)
	mustRun(t, s.env, "compute", "create", "--name", "crawl-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1", "-o", "none")
	job := writeJobFile(t, "command: echo crawled | tee ${{outputs.out}}/crawled.txt\noutputs:\n  out:\n    type: uri_folder\ncompute: crawl-cpu\n")
	small := strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", job, "--query", "name", "-o", "tsv"))
	// More than the 64 KiB the page holds: the page has the log's end.
	job = writeJobFile(t, "command: seq 1 20000\ncompute: crawl-cpu\n")
	big := strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", job, "--query", "name", "-o", "tsv"))
	port := strconv.Itoa(freePort(t))
	ci := `{"type": "ComputeInstance", "size": "Standard_DS3_v2", "custom_applications": [{"name": "files",
		"command": "python3 -m http.server ` + port + ` --bind 127.0.0.1", "endpoints": [{"target": ` + port + `, "published": ` + port + `}]}]}`
	if code, _, body := s.httpDo(t, "PUT", "/api/v1/workspaces/default/computes/crawl-ci", admin, []byte(ci), nil); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("creating the instance: %d %s", code, body)
	}
	waitJob(t, s, small, 120*time.Second, "Completed")
	waitJob(t, s, big, 120*time.Second, "Completed")
	waitFor(t, 120*time.Second, "the instance's applications ready", func() (bool, string) {
		v := showInstance(t, s.env, "crawl-ci")
		ready := len(v.Applications) > 0
		for _, a := range v.Applications {
			ready = ready && a.Ready
		}
		return ready, fmt.Sprint(v.Applications)
	})

	jar := &cookieJar{cookies: []*http.Cookie{{Name: "shoal_session", Value: admin}}}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ref := regexp.MustCompile(`(?:href|src)="([^"#]*)"`)
	seen := map[string]bool{}
	queue := []string{"/"}
	pages := 0
	var apiLinks []string
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
			t.Errorf("GET %s: %d %.300s", p, resp.StatusCode, body)
			continue
		}
		// The API's answers (logs, archives, an application's pages)
		// are checked, not crawled: the studio's pages are.
		if strings.HasPrefix(p, "/api/") {
			apiLinks = append(apiLinks, p)
			continue
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		pages++
		for _, m := range ref.FindAllStringSubmatch(string(body), -1) {
			u, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			if err == nil && u.Host != "" && u.Host != strings.TrimPrefix(s.url, "http://") && strings.Contains(u.Path, "/applications/") && !seen[u.String()] {
				// An application, on the applications' own origin: the
				// session cookie (host-scoped, not port-scoped) opens it.
				seen[u.String()] = true
				resp, err := client.Get(u.String())
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode >= 400 { // Jupyter's root redirects to its tree
					t.Errorf("GET %s with the session: %d", u, resp.StatusCode)
				}
				apiLinks = append(apiLinks, u.RequestURI())
				continue
			}
			if err != nil || (u.Host != "" && u.Host != strings.TrimPrefix(s.url, "http://")) || u.Path == "" {
				continue
			}
			queue = append(queue, u.RequestURI())
		}
	}
	if pages < 8 {
		t.Errorf("crawled %d pages, want every page of the studio (%v)", pages, seen)
	}
	for _, want := range []string{"/computes/crawl-ci", "/computes/crawl-ci/edit", "/jobs/" + big} {
		if !seen[want] {
			t.Errorf("the crawl did not reach %s", want)
		}
	}
	linked := func(suffix string) bool {
		return slices.ContainsFunc(apiLinks, func(l string) bool { return strings.HasSuffix(l, suffix) })
	}
	for _, want := range []string{"/jobs/" + small + "/logs?rank=0", "/jobs/" + small + "/outputs?rank=0", "/jobs/" + big + "/logs?rank=0", "/computes/crawl-ci/applications/files/"} {
		if !linked(want) {
			t.Errorf("no page links %s (the API links crawled: %v)", want, apiLinks)
		}
	}
	if linked("/jobs/" + big + "/outputs?rank=0") {
		t.Error("a job without outputs links an outputs download")
	}

	// Without JavaScript a job page holds its log: all of a small one,
	// the end of a big one.
	get := func(path string) string {
		resp, err := client.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	logOf := regexp.MustCompile(`(?s)<pre id="log"[^>]*>(.*?)</pre>`)
	if m := logOf.FindStringSubmatch(get("/jobs/" + small)); m == nil || !strings.Contains(m[1], "crawled") {
		t.Errorf("the small job's page without its log: %v", m)
	}
	if m := logOf.FindStringSubmatch(get("/jobs/" + big)); m == nil || !strings.Contains(m[1], "bytes are left out") || !strings.HasSuffix(strings.TrimSpace(m[1]), "\n20000") || strings.Contains(m[1], "\n2\n3\n") {
		t.Errorf("the big job's page does not hold the log's end alone: %.200q", m)
	}
}

// cookieJar sends a fixed session cookie to the test server.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie     { return j.cookies }

package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// jobServicesView is a job's services as `shoal job show -o json` prints
// them.
type jobServicesView struct {
	Status   string `json:"status"`
	Services map[string]struct {
		Type         string `json:"type"`
		Status       string `json:"status"`
		Endpoint     string `json:"endpoint"`
		ErrorMessage string `json:"error_message"`
	} `json:"services"`
}

// A running job's services: the job's own web server on a custom port
// and Jupyter (Debian's Notebook server: Debian has no JupyterLab) are
// reached through the application proxy by the job's submitter only —
// another member and an administrator get 403 — and not after the job
// ends; a tensor_board service whose program the environment lacks says
// Failed with why while the job runs on; a custom service on a port where
// another process listens (standing for another user's or the server's)
// is refused at dial.
func TestJobServicesThroughTheProxy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Contributor"})
	alice, bob := users["alice"], users["bob"]
	createCluster(t, s, "svc", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	foreign, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(foreign, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "another user's secret")
	}))
	t.Cleanup(func() { foreign.Close() })
	webPort := freePort(t)
	file := writeJobFile(t, fmt.Sprintf(`type: command
command: echo served-by-the-job > index.html && exec python3 -m http.server %d --bind 127.0.0.1
compute: azureml:svc
services:
  web:
    type: custom
    port: %d
  notebook:
    type: jupyter_lab
  board:
    type: tensor_board
    log_dir: outputs/tb
  borrowed:
    job_service_type: Custom
    port: %d
`, webPort, webPort, foreign.Addr().(*net.TCPAddr).Port))
	name := runJSON[jobView](t, alice, "job", "create", "-f", file, "-o", "json").Name
	var v jobServicesView
	waitFor(t, 90*time.Second, "the job's web and notebook services to run", func() (bool, string) {
		v = runJSON[jobServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
		return v.Services["web"].Status == "Running" && v.Services["notebook"].Status == "Running" && v.Services["board"].Status == "Failed", fmt.Sprintf("%+v", v)
	})
	if e := v.Services["board"].ErrorMessage; !strings.Contains(e, "no tensorboard") {
		t.Errorf("the missing tensorboard says %q; want the sentence naming it", e)
	}
	if v.Status != "Running" {
		t.Errorf("the job with a failed service is %s; want Running", v.Status)
	}
	web := v.Services["web"].Endpoint
	path := urlPath(t, web)
	if !strings.HasPrefix(path, "/api/v1/workspaces/default/jobs/"+name+"/nodes/0/applications/web/") {
		t.Fatalf("the web service's endpoint: %q", web)
	}
	code, _, body := s.httpDo(t, "GET", path+"index.html", tokenOf(alice), nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "served-by-the-job") {
		t.Errorf("the submitter through the proxy: %d %s", code, body)
	}
	for who, tok := range map[string]string{"another member": tokenOf(bob), "an administrator": s.adminToken(t)} {
		if code, _, body := s.httpDo(t, "GET", path+"index.html", tok, nil, nil); code != http.StatusForbidden || strings.Contains(string(body), "served-by-the-job") {
			t.Errorf("%s through the proxy: %d %s; want 403", who, code, body)
		}
	}
	nb := urlPath(t, v.Services["notebook"].Endpoint)
	if code, _, body := s.httpDo(t, "GET", nb+"api/status", tokenOf(alice), nil, nil); code != http.StatusOK || !strings.Contains(string(body), "started") {
		t.Errorf("the job's Jupyter through the proxy: %d %s", code, body)
	}
	borrowed := strings.Replace(path, "/applications/web/", "/applications/borrowed/", 1)
	code, _, body = s.httpDo(t, "GET", borrowed, tokenOf(alice), nil, nil)
	if code == http.StatusOK || strings.Contains(string(body), "secret") {
		t.Errorf("a service on another process's port: %d %s", code, body)
	}
	if os.Geteuid() != 0 && (code != http.StatusForbidden || !strings.Contains(string(body), "not the job's rank's")) {
		t.Errorf("a service on another process's port: %d %s; want 403 naming the rule", code, body)
	}
	mustRun(t, alice, "job", "cancel", "-n", name)
	waitJob(t, s, name, 60*time.Second, "Canceled")
	if code, _, body := s.httpDo(t, "GET", path+"index.html", tokenOf(alice), nil, nil); code < 400 || strings.Contains(string(body), "served-by-the-job") {
		t.Errorf("the service after the job ended: %d %s", code, body)
	}
	v = runJSON[jobServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
	if st := v.Services["web"]; st.Status != "Stopped" || st.Endpoint != "" {
		t.Errorf("the web service after the job ended: %+v", st)
	}
}

// urlPath is the path of an absolute URL.
func urlPath(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		t.Fatalf("not an absolute URL: %q", u)
	}
	return p.Path
}

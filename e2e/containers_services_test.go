package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A job in a container serves a custom service from its own network:
// the proxy reaches the container's listener for the submitter (its
// ownership is the container's); Jupyter, looked for inside the
// container, is missing from the image and says so as a Failed service
// while the job runs.
func testContainerServices(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-svc", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	port := freePort(t)
	name := submitJob(t, s, writeJobFile(t, fmt.Sprintf(`command: echo from-the-container > index.html && exec python3 -m http.server %[1]d --bind 127.0.0.1
compute: azureml:ctr-svc
environment:
  image: %[2]s
services:
  web:
    type: custom
    port: %[1]d
  lab:
    type: jupyter_lab
`, port, f.image)))
	var v jobServicesView
	waitFor(t, 3*time.Minute, "the container's services", func() (bool, string) {
		v = runJSON[jobServicesView](t, s.env, "job", "show", "-n", name, "-o", "json")
		return v.Services["web"].Status == "Running" && v.Services["lab"].Status == "Failed", fmt.Sprintf("%+v", v)
	})
	if e := v.Services["lab"].ErrorMessage; !strings.Contains(e, "the job's environment has no Jupyter Lab (jupyter-lab) nor Jupyter Notebook (jupyter-notebook)") {
		t.Errorf("Jupyter in a container: %q", e)
	}
	code, _, body := s.httpDo(t, "GET", urlPath(t, v.Services["web"].Endpoint)+"index.html", s.adminToken(t), nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "from-the-container") {
		t.Errorf("the container's service through the proxy: %d %s", code, body)
	}
	mustRun(t, s.env, "job", "cancel", "-n", name)
	waitJob(t, s, name, 2*time.Minute, "Canceled")
	waitNoContainers(t, f, currentAttempt(t, s, name).Ranks[0].NodeID)
}

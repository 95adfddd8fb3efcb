package studio_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// The job page lists the job's services, a row per node that serves
// each, with their status (a queued job's are Starting) and who may open
// them; a job without services has no such section.
func TestJobPageServices(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	if _, _, err := svc.CreateOrApplyCompute(admin, core.DefaultWorkspace, &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: ptr(2)}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SubmitJob(admin, core.DefaultWorkspace, &job.JobSpec{Name: "with-services", Command: "sleep 60", Compute: "cpu",
		Resources: &job.JobResources{InstanceCount: 2}, Services: map[string]*interactive.Service{
			"web": {Type: "custom", Port: 8080, Nodes: "all"}, "nb": {Type: "jupyter_lab"},
		}}); err != nil {
		t.Fatal(err)
	}
	code, body := page(t, ts, "/jobs/with-services", token)
	if code != http.StatusOK {
		t.Fatalf("job page: %d\n%s", code, body)
	}
	for what, s := range map[string]string{
		"the section":        `id="services"`,
		"nb on node 0":       `<td>nb</td><td>jupyter_lab</td><td>0</td>`,
		"web on node 1":      `<td>web</td><td>custom</td><td>1</td>`,
		"a starting service": `>Starting</span>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("%s: %s not in the page", what, s)
		}
	}
	if strings.Contains(body, `<td>nb</td><td>jupyter_lab</td><td>1</td>`) {
		t.Error("a first-node service is listed on node 1")
	}
	if _, _, err := svc.SubmitJob(admin, core.DefaultWorkspace, &job.JobSpec{Name: "plain", Command: "true", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if _, body := page(t, ts, "/jobs/plain", token); strings.Contains(body, `id="services"`) {
		t.Error("a job without services has a services section")
	}
}

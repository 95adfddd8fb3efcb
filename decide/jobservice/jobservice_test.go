package jobservice_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/decide/jobservice"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

func twoNodeJob() (*job.Job, *job.Attempt) {
	j := &job.Job{Workspace: "w s", Status: job.JobRunning, CurrentAttemptID: "a1", JobSpec: job.JobSpec{Name: "j/1",
		Resources: &job.JobResources{InstanceCount: 2}, Services: map[string]*interactive.Service{
			"web": {Type: interactive.ServiceCustom, Port: 8080, Nodes: "all"},
			"sh":  {Type: interactive.ServiceSSH, SSHPublicKeys: "ssh-ed25519 AAAA k"},
		}}}
	a := &job.Attempt{ID: "a1", Status: job.AttemptRunning, Ranks: []*job.RankStatus{{Rank: 0, Status: job.AttemptRunning}, {Rank: 1, Status: job.AttemptRunning}}}
	return j, a
}

// A node's report keeps the job's own services once each, with the
// job's type; another port, an address off the loopback, an unknown
// status and an endless error do not pass as sent.
func TestKeepReported(t *testing.T) {
	j, _ := twoNodeJob()
	got := jobservice.KeepReported(j, 1, []interactive.ServiceInstance{
		{Name: "web", Type: interactive.ServiceJupyterLab, Port: 8080, Addr: "127.0.0.1:8080", Status: "Bogus", Error: strings.Repeat("x", 5000)},
		{Name: "web", Port: 9, Addr: "127.0.0.1:9", Status: interactive.ServiceStatusRunning},
		{Name: "sh", Port: 22, Addr: "10.0.0.1:22", Status: interactive.ServiceStatusRunning},
		{Name: "db", Port: 5432, Addr: "127.0.0.1:5432", Status: interactive.ServiceStatusRunning},
	})
	if len(got) != 1 || got[0].Name != "web" || got[0].Type != interactive.ServiceCustom || got[0].Status != interactive.ServiceStatusStarting || len(got[0].Error) > 1003 {
		t.Fatalf("node 1's report kept as %+v; want web alone (sh is the first node's), custom, Starting, its error cut", got)
	}
	for name, r := range map[string]interactive.ServiceInstance{
		"another port":        {Name: "web", Port: 9, Addr: "127.0.0.1:9", Status: interactive.ServiceStatusRunning},
		"another address":     {Name: "web", Port: 8080, Addr: "10.1.2.3:8080", Status: interactive.ServiceStatusRunning},
		"the loopback of any": {Name: "web", Port: 8080, Addr: "0.0.0.0:8080", Status: interactive.ServiceStatusRunning},
	} {
		got := jobservice.KeepReported(j, 0, []interactive.ServiceInstance{r})
		if len(got) != 1 || got[0].Status != interactive.ServiceStatusFailed || got[0].Addr != "" {
			t.Errorf("%s: kept as %+v, want Failed with no address", name, got)
		}
	}
	if got := jobservice.KeepReported(j, 0, nil); got != nil {
		t.Errorf("no services in the report: %+v, want nil (the last ones stay)", got)
	}
}

// The shown state: a node per instance before the job has an attempt, an
// endpoint (the proxy's, escaped) while a service runs, ssh's at the
// node's address, Stopped once the attempt ended.
func TestView(t *testing.T) {
	j, a := twoNodeJob()
	queued := *j
	queued.Status, queued.CurrentAttemptID = job.JobQueued, ""
	jobservice.View("https://apps/", &queued, nil)
	if in := queued.Services["web"].Instances; len(in) != 2 || in[1].Status != interactive.ServiceStatusStarting {
		t.Errorf("a queued job's web: %+v", in)
	}
	a.Ranks[0].Services = []interactive.ServiceInstance{{Name: "web", Status: interactive.ServiceStatusRunning, Addr: "127.0.0.1:8080"},
		{Name: "sh", Status: interactive.ServiceStatusRunning, Addr: "10.0.0.7:2222", HostKey: "ssh-ed25519 HOST"}}
	running := *j
	jobservice.View("https://apps/", &running, a)
	if w := running.Services["web"]; w.Status != interactive.ServiceStatusRunning || w.Endpoint != "https://apps/api/v1/workspaces/w%20s/jobs/j%2F1/nodes/0/applications/web/" {
		t.Errorf("web while it runs: %+v", w)
	}
	if s := running.Services["sh"].Instances; len(s) != 1 || s[0].Endpoint != "ssh://azureuser@10.0.0.7:2222" || s[0].HostKey != "ssh-ed25519 HOST" {
		t.Errorf("sh while it runs: %+v", s)
	}
	if j.Services["web"].Status != "" {
		t.Errorf("View changed the stored job's services")
	}
	a.Status = job.AttemptCompleted
	ended := *j
	jobservice.View("https://apps/", &ended, a)
	if w := ended.Services["web"]; w.Status != interactive.ServiceStatusStopped || w.Endpoint != "" {
		t.Errorf("web after the attempt ended: %+v", w)
	}
}

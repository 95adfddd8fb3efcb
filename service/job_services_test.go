package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
)

// A job's services: the rank's task names the services its node serves
// (Jupyter with a token), a node's report is kept only for services the
// job has and on a custom service's own port, and the proxy's resolution
// lets in the submitter alone — not another member, an administrator or
// a workload acting for the submitter — and nobody once the job ended.
func TestJobServicesResolveForTheSubmitterOnly(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 60)
	who := func(id string, admin bool) context.Context {
		return identity.WithPrincipal(h.ctx, &identity.Principal{ID: id, Name: strings.TrimPrefix(id, "user:"), Kind: identity.PrincipalUser, Admin: admin})
	}
	bob := who("user:bob", false)
	spec := &job.JobSpec{Name: "svc", Command: command("svc"), Compute: "cpu", Services: map[string]*interactive.Service{
		"web": {Type: "custom", Port: 8080}, "nb": {Type: "jupyter_lab"}, "ssh": {Type: "ssh", SSHPublicKeys: "ssh-ed25519 AAAA k"},
	}}
	if _, _, err := h.svc.SubmitJob(bob, ws, spec); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	ids := h.joinAll()
	h.step(0)
	n := ids[0]
	task := h.start(n)
	var names []string
	for _, s := range task.Services {
		names = append(names, s.Name)
		if want := "/api/v1/workspaces/" + ws + "/jobs/svc/nodes/0/applications/" + s.Name + "/"; s.BaseURL != want {
			t.Errorf("service %s's base URL %q, want %q", s.Name, s.BaseURL, want)
		}
		if (s.Token != "") != (s.Name == "nb") {
			t.Errorf("service %s's token: %q (Jupyter alone has one)", s.Name, s.Token)
		}
	}
	if !slices.Equal(names, []string{"nb", "ssh", "web"}) {
		t.Fatalf("the rank's services: %v", names)
	}
	uid := 1234
	rep := &node.RankReport{State: node.RankRunning, Services: []interactive.ServiceInstance{
		{Name: "web", Port: 8080, Status: interactive.ServiceStatusRunning, Addr: "127.0.0.1:8080", ListenerOwner: core.ListenerOwner{UID: &uid}},
		{Name: "nb", Type: interactive.ServiceCustom, Port: 22, Status: interactive.ServiceStatusRunning, Addr: "127.0.0.1:22"},
		{Name: "ssh", Status: interactive.ServiceStatusFailed, Error: "SSH into a running job is not served yet"},
		{Name: "sneaky", Type: interactive.ServiceCustom, Port: 5432, Status: interactive.ServiceStatusRunning, Addr: "127.0.0.1:5432"},
	}}
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, rep); err != nil {
		t.Fatal(err)
	}
	got, err := h.svc.FindJob(bob, ws, "svc")
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Services["web"]; s.Status != interactive.ServiceStatusRunning || !strings.HasSuffix(s.Endpoint, "/jobs/svc/nodes/0/applications/web/") {
		t.Errorf("web as shown: %+v", s)
	}
	if s := got.Services["ssh"]; s.Status != interactive.ServiceStatusFailed || !strings.Contains(s.ErrorMessage, "not served yet") || s.Endpoint != "" {
		t.Errorf("ssh as shown: %+v", s)
	}
	if _, ok := got.Services["sneaky"]; ok {
		t.Errorf("a service the job does not have is shown")
	}
	tg, err := h.svc.ResolveJobService(bob, ws, "svc", 0, "web")
	if err != nil {
		t.Fatalf("the submitter: %v", err)
	}
	if tg.Addr != "127.0.0.1:8080" || !tg.StripPrefix || tg.UID == nil || *tg.UID != uid || tg.Token != "" {
		t.Errorf("web's target: %+v", tg)
	}
	// The reported type and port of a known service are the job's:
	// Jupyter keeps its type (and its token), never another port's
	// custom application.
	nb, err := h.svc.ResolveJobService(bob, ws, "svc", 0, "nb")
	if err != nil || nb.StripPrefix || nb.Token != task.Services[0].Token {
		t.Errorf("nb's target: %+v %v", nb, err)
	}
	for name, c := range map[string]struct {
		ctx  context.Context
		svc  string
		node int
		code string
	}{
		"another member":               {who("user:alice", false), "web", 0, core.EFORBIDDEN},
		"an administrator":             {who("admin", true), "web", 0, core.EFORBIDDEN},
		"a workload acting for bob":    {identity.WithPrincipal(h.ctx, &identity.Principal{ID: "run:" + ws + "/other", OnBehalfOf: "user:bob"}), "web", 0, core.EFORBIDDEN},
		"a job's token acting as bob":  {identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:bob", Kind: identity.PrincipalUser, AttemptID: "att-other"}), "web", 0, core.EFORBIDDEN},
		"a service the job lacks":      {bob, "sneaky", 0, core.ENOTFOUND},
		"a failed service":             {bob, "ssh", 0, core.ENOTFOUND},
		"a node the service is not on": {bob, "web", 1, core.ENOTFOUND},
	} {
		if _, err := h.svc.ResolveJobService(c.ctx, ws, "svc", c.node, c.svc); core.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	// A service reported off the rank's loopback is refused.
	rep.Services[1].Addr = "10.0.0.9:22"
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, rep); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.ResolveJobService(bob, ws, "svc", 0, "nb"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a service reported at another machine's address: %v, want refused", err)
	}
	// A custom service reported on another port is refused.
	rep.Services[1].Addr = "127.0.0.1:22"
	rep.Services[0].Port, rep.Services[0].Addr = 5432, "127.0.0.1:5432"
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, rep); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.ResolveJobService(bob, ws, "svc", 0, "web"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a custom service reported on another port: %v, want refused", err)
	}
	h.finish(n, task, node.RankCompleted)
	if _, err := h.svc.ResolveJobService(bob, ws, "svc", 0, "nb"); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("after the job ended: %v, want ECONFLICT", err)
	}
	got, _ = h.svc.FindJob(bob, ws, "svc")
	if s := got.Services["nb"]; s.Status != interactive.ServiceStatusStopped || s.Endpoint != "" {
		t.Errorf("nb after the job ended: %+v", s)
	}
}

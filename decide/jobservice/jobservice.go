// Package jobservice decides about a job's services (services.<name>:
// Jupyter Lab, TensorBoard, VS Code, SSH, a custom port) over a job and
// its current attempt: which services each node serves, which of a node's
// reports to keep, how they show, and whether a caller may reach one
// through the application proxy. Pure: the service package reads the
// store and mints the tokens.
package jobservice

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
)

// Path is the application proxy's path of a job's service on node index
// nodeIndex (Jupyter's and TensorBoard's base URL).
func Path(workspace, jobName string, nodeIndex int, svc string) string {
	return "/api/v1/workspaces/" + url.PathEscape(workspace) + "/jobs/" + url.PathEscape(jobName) +
		"/nodes/" + strconv.Itoa(nodeIndex) + "/applications/" + url.PathEscape(svc) + "/"
}

// Tasks are the services node index rank of job j serves; token is the
// Jupyter token of a service on a node.
func Tasks(j *job.Job, rank int, token func(nodeIndex int, svc string) string) []node.ServiceTask {
	var out []node.ServiceTask
	for _, name := range core.SortedKeys(j.Services) {
		sv := j.Services[name]
		if sv == nil || !sv.ServesOnNode(rank) {
			continue
		}
		t := node.ServiceTask{Name: name, Type: sv.Type, Port: sv.Port, LogDir: sv.LogDir, SSHPublicKeys: sv.SSHPublicKeys,
			BaseURL: Path(j.Workspace, j.Name, rank, name)}
		if sv.Type == interactive.ServiceJupyterLab {
			t.Token = token(rank, name)
		}
		out = append(out, t)
	}
	return out
}

// maxError bounds the error a node reports of a service: a sentence,
// kept in the attempt's document.
const maxError = 1000

// KeepReported keeps of a node's report the services job j has on node
// index rank (by name, with the job's type and port): an agent cannot
// make the proxy reach a service the job did not ask for, on another
// port than a custom service's, or off the rank's loopback.
func KeepReported(j *job.Job, rank int, reported []interactive.ServiceInstance) []interactive.ServiceInstance {
	if reported == nil {
		return nil
	}
	out := []interactive.ServiceInstance{}
	seen := map[string]bool{}
	for _, r := range reported {
		sv := j.Services[r.Name]
		if sv == nil || seen[r.Name] || !sv.ServesOnNode(rank) {
			continue
		}
		seen[r.Name] = true
		r.Type = sv.Type
		if sv.Type == interactive.ServiceCustom && r.Port != sv.Port {
			r.Addr, r.Status, r.Error = "", interactive.ServiceStatusFailed, "reported on another port than the job's"
		}
		if sv.Type != interactive.ServiceSSH && r.Addr != "" && r.Addr != "127.0.0.1:"+strconv.Itoa(r.Port) {
			// What the proxy dials is the rank's own loopback, never
			// another machine or address.
			r.Addr, r.Status, r.Error = "", interactive.ServiceStatusFailed, "reported at an address off the rank's loopback"
		}
		switch r.Status {
		case interactive.ServiceStatusStarting, interactive.ServiceStatusRunning, interactive.ServiceStatusFailed:
		default:
			r.Status = interactive.ServiceStatusStarting
		}
		if len(r.Error) > maxError {
			r.Error = r.Error[:maxError] + "..."
		}
		out = append(out, r)
	}
	return out
}

// View fills the shown state of j's services from its current attempt a
// (nil before it has one): each service's state per node, its endpoint
// (on appsURL, the applications' origin) while it runs.
func View(appsURL string, j *job.Job, a *job.Attempt) {
	if j == nil || len(j.Services) == 0 {
		return
	}
	shown := make(map[string]*interactive.Service, len(j.Services))
	for name, sv := range j.Services {
		if sv == nil {
			continue
		}
		c := *sv
		c.Instances = nodes(appsURL, j, a, name, sv)
		if len(c.Instances) > 0 && c.Instances[0].NodeIndex == 0 {
			c.Status, c.Endpoint, c.ErrorMessage = c.Instances[0].Status, c.Instances[0].Endpoint, c.Instances[0].ErrorMessage
		}
		shown[name] = &c
	}
	j.Services = shown
}

// nodes is service name's state on each node that serves it.
func nodes(appsURL string, j *job.Job, a *job.Attempt, name string, sv *interactive.Service) []interactive.ServiceNodeStatus {
	var out []interactive.ServiceNodeStatus
	ranks := j.InstanceCount()
	if a != nil {
		ranks = len(a.Ranks)
	}
	for i := 0; i < ranks; i++ {
		if !sv.ServesOnNode(i) {
			continue
		}
		st := interactive.ServiceNodeStatus{NodeIndex: i, Status: interactive.ServiceStatusStarting}
		inst := Reported(a, i, name)
		if inst != nil {
			st.Status, st.ErrorMessage = inst.Status, inst.Error
		}
		switch {
		case job.JobTerminal(j.Status) || a != nil && job.AttemptTerminal(a.Status):
			if st.Status != interactive.ServiceStatusFailed {
				st.Status = interactive.ServiceStatusStopped
			}
		case st.Status == interactive.ServiceStatusRunning && sv.Type == interactive.ServiceSSH:
			// Reached with an SSH client, not through the proxy.
			if inst != nil && inst.Addr != "" {
				st.Endpoint, st.HostKey = "ssh://"+compute.InstanceAdminUsername+"@"+inst.Addr, inst.HostKey
			}
		case st.Status == interactive.ServiceStatusRunning:
			st.Endpoint = strings.TrimRight(appsURL, "/") + Path(j.Workspace, j.Name, i, name)
		}
		out = append(out, st)
	}
	return out
}

// Reported is what the node of rank i last reported of service name, nil
// when nothing.
func Reported(a *job.Attempt, i int, name string) *interactive.ServiceInstance {
	if a == nil || i < 0 || i >= len(a.Ranks) || a.Ranks[i] == nil {
		return nil
	}
	for k := range a.Ranks[i].Services {
		if a.Ranks[i].Services[k].Name == name {
			return &a.Ranks[i].Services[k]
		}
	}
	return nil
}

// Reach checks that caller p may reach service svc of job j on node
// index nodeIndex — the job's submitter in person (not a workload acting
// for or as them, not another member or an administrator), while the
// job's attempt a runs and the service listens through the proxy — and
// returns what the node reported of it. ENOTFOUND, EFORBIDDEN, ECONFLICT
// (not running), EUNAVAILABLE (not listening yet).
func Reach(p *identity.Principal, j *job.Job, a *job.Attempt, nodeIndex int, svc string) (*interactive.ServiceInstance, error) {
	// A workload (a job's token, one acting as its submitter included)
	// is not the submitter in person.
	if p == nil || p.OnBehalfOf != "" || p.AttemptID != "" || p.ID == "" || p.ID != j.CreatedByPrincipal {
		return nil, core.Errorf(core.EFORBIDDEN, "the services of job %q are reachable only by the user who submitted it", j.Name)
	}
	sv := j.Services[svc]
	if sv == nil || !sv.ServesOnNode(nodeIndex) {
		return nil, core.Errorf(core.ENOTFOUND, "job %q has no service %q on node %d", j.Name, svc, nodeIndex)
	}
	if sv.Type == interactive.ServiceSSH {
		return nil, core.Errorf(core.ENOTFOUND, "service %s of job %s is SSH, which the application proxy does not carry: connect with `shoal job connect-ssh -n %s`", svc, j.Name, j.Name)
	}
	if a == nil || job.JobTerminal(j.Status) {
		return nil, core.Errorf(core.ECONFLICT, "job %q is %s: its services are reachable only while it runs", j.Name, j.Status)
	}
	if job.AttemptTerminal(a.Status) || nodeIndex < 0 || nodeIndex >= len(a.Ranks) {
		return nil, core.Errorf(core.ECONFLICT, "job %q is not running on node %d", j.Name, nodeIndex)
	}
	if rs := a.Ranks[nodeIndex]; rs.Status != job.AttemptRunning {
		return nil, core.Errorf(core.EUNAVAILABLE, "job %q is %s on node %d: its service %s is not up yet", j.Name, strings.ToLower(rs.Status), nodeIndex, svc)
	}
	inst := Reported(a, nodeIndex, svc)
	switch {
	case inst == nil || inst.Status == interactive.ServiceStatusStarting || inst.Addr == "" && inst.Status != interactive.ServiceStatusFailed:
		return nil, core.Errorf(core.EUNAVAILABLE, "service %s of job %s is not listening yet on node %d", svc, j.Name, nodeIndex)
	case inst.Status == interactive.ServiceStatusFailed:
		return nil, core.Errorf(core.ENOTFOUND, "service %s of job %s failed on node %d: %s", svc, j.Name, nodeIndex, inst.Error)
	}
	return inst, nil
}

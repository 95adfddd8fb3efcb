package service

import (
	"context"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/store"
)

// A job's services (services.<name>: Jupyter Lab, TensorBoard, VS Code,
// a custom port) are served by the nodes of its ranks while they run and
// reached through the application proxy, as an instance's applications
// are: only by the job's submitter, only while the job runs, and only
// when the listener is a process of the job's own rank.

// JobServicePath is the application proxy's path of a job's service on
// node index nodeIndex (Jupyter's and TensorBoard's base URL).
func JobServicePath(workspace, jobName string, nodeIndex int, svc string) string {
	return "/api/v1/workspaces/" + url.PathEscape(workspace) + "/jobs/" + url.PathEscape(jobName) +
		"/nodes/" + strconv.Itoa(nodeIndex) + "/applications/" + url.PathEscape(svc) + "/"
}

// serviceTokenPurpose separates the services' tokens from the key's other
// MACs.
const serviceTokenPurpose = "shoal job service token"

// jobServiceToken is the token of a job's Jupyter on one node: derived
// from the attempt, the node and the service under the server's secrets
// key, so nothing is stored and every replica's proxy sends the same;
// "" when the server has no key.
func (s *Services) jobServiceToken(attemptID string, nodeIndex int, svc string) string {
	if s.cfg.SecretsKey == nil {
		return ""
	}
	return hex.EncodeToString(s.cfg.SecretsKey.MAC(serviceTokenPurpose, []byte(attemptID+"/"+strconv.Itoa(nodeIndex)+"/"+svc)))
}

// jobServiceTasks are the services node index rank of attempt a serves.
func (s *Services) jobServiceTasks(j *job.Job, a *job.Attempt, rank int) []node.ServiceTask {
	var out []node.ServiceTask
	for _, name := range core.SortedKeys(j.Services) {
		sv := j.Services[name]
		if sv == nil || !sv.ServesOnNode(rank) {
			continue
		}
		t := node.ServiceTask{Name: name, Type: sv.Type, Port: sv.Port, LogDir: sv.LogDir, SSHPublicKeys: sv.SSHPublicKeys,
			BaseURL: JobServicePath(j.Workspace, j.Name, rank, name)}
		if sv.Type == job.ServiceJupyterLab {
			t.Token = s.jobServiceToken(a.ID, rank, name)
		}
		out = append(out, t)
	}
	return out
}

// maxServiceError bounds the error a node reports of a service: a
// sentence, kept in the attempt's document.
const maxServiceError = 1000

// keepReportedServices keeps of a node's report the services the job has
// on that node (by name, with the job's type and port): an agent cannot
// make the proxy reach a service the job did not ask for, nor on another
// port than a custom service's.
func keepReportedServices(j *job.Job, rank int, reported []job.ServiceInstance) []job.ServiceInstance {
	if reported == nil {
		return nil
	}
	out := []job.ServiceInstance{}
	seen := map[string]bool{}
	for _, r := range reported {
		sv := j.Services[r.Name]
		if sv == nil || seen[r.Name] || !sv.ServesOnNode(rank) {
			continue
		}
		seen[r.Name] = true
		r.Type = sv.Type
		if sv.Type == job.ServiceCustom && r.Port != sv.Port {
			r.Addr, r.Status, r.Error = "", job.ServiceStatusFailed, "reported on another port than the job's"
		}
		if sv.Type != job.ServiceSSH && r.Addr != "" && !onLoopback(r.Addr, r.Port) {
			// What the proxy dials is the rank's own loopback, never
			// another machine or address.
			r.Addr, r.Status, r.Error = "", job.ServiceStatusFailed, "reported at an address off the rank's loopback"
		}
		switch r.Status {
		case job.ServiceStatusStarting, job.ServiceStatusRunning, job.ServiceStatusFailed:
		default:
			r.Status = job.ServiceStatusStarting
		}
		if len(r.Error) > maxServiceError {
			r.Error = r.Error[:maxServiceError] + "..."
		}
		out = append(out, r)
	}
	return out
}

// withServices fills the shown state of j's services from its current
// attempt's ranks.
func (s *Services) withServices(tx store.Tx, j *job.Job) error {
	if j == nil || len(j.Services) == 0 {
		return nil
	}
	var a *job.Attempt
	if j.CurrentAttemptID != "" {
		var err error
		if a, err = tx.GetAttempt(j.CurrentAttemptID); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
	}
	shown := make(map[string]*job.InteractiveService, len(j.Services))
	for name, sv := range j.Services {
		if sv == nil {
			continue
		}
		c := *sv
		c.Instances = s.serviceNodes(j, a, name, sv)
		if len(c.Instances) > 0 && c.Instances[0].NodeIndex == 0 {
			c.Status, c.Endpoint, c.ErrorMessage = c.Instances[0].Status, c.Instances[0].Endpoint, c.Instances[0].ErrorMessage
		}
		shown[name] = &c
	}
	j.Services = shown
	return nil
}

// serviceNodes is service name's state on each node that serves it.
func (s *Services) serviceNodes(j *job.Job, a *job.Attempt, name string, sv *job.InteractiveService) []job.ServiceNodeStatus {
	var out []job.ServiceNodeStatus
	ranks := j.InstanceCount()
	if a != nil {
		ranks = len(a.Ranks)
	}
	for i := 0; i < ranks; i++ {
		if !sv.ServesOnNode(i) {
			continue
		}
		st := job.ServiceNodeStatus{NodeIndex: i, Status: job.ServiceStatusStarting}
		if inst := reportedService(a, i, name); inst != nil {
			st.Status, st.ErrorMessage = inst.Status, inst.Error
		}
		switch {
		case job.JobTerminal(j.Status) || a != nil && job.AttemptTerminal(a.Status):
			if st.Status != job.ServiceStatusFailed {
				st.Status = job.ServiceStatusStopped
			}
		case st.Status == job.ServiceStatusRunning && sv.Type == job.ServiceSSH:
			// Reached with an SSH client, not through the proxy.
			if inst := reportedService(a, i, name); inst != nil && inst.Addr != "" {
				st.Endpoint, st.HostKey = "ssh://"+compute.InstanceAdminUsername+"@"+inst.Addr, inst.HostKey
			}
		case st.Status == job.ServiceStatusRunning:
			st.Endpoint = strings.TrimRight(s.cfg.AppsURL, "/") + JobServicePath(j.Workspace, j.Name, i, name)
		}
		out = append(out, st)
	}
	return out
}

// reportedService is what the node of rank i last reported of service
// name, nil when nothing.
func reportedService(a *job.Attempt, i int, name string) *job.ServiceInstance {
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

// ResolveJobService checks that the caller may reach a job's service on
// node index nodeIndex — the job's submitter in person (not a workload
// acting for or as them, not another member or an administrator), while the
// job's attempt runs and the service listens — and returns where the
// proxy sends the request and whose process must hold the listener.
// Returns ENOTFOUND, EFORBIDDEN, ECONFLICT (not running), EUNAVAILABLE
// (not listening yet).
func (s *Services) ResolveJobService(ctx context.Context, workspace, jobName string, nodeIndex int, svc string) (*computes.InstanceAppTarget, error) {
	var t *computes.InstanceAppTarget
	err := s.store.View(ctx, func(tx store.Tx) error {
		j, err := s.getJob(tx, workspace, jobName)
		if err != nil {
			return err
		}
		p := identity.PrincipalFrom(ctx)
		// A workload (a job's token, one acting as its submitter
		// included) is not the submitter in person.
		if p == nil || p.OnBehalfOf != "" || p.AttemptID != "" || p.ID == "" || p.ID != j.CreatedByPrincipal {
			return core.Errorf(core.EFORBIDDEN, "the services of job %q are reachable only by the user who submitted it", j.Name)
		}
		sv := j.Services[svc]
		if sv == nil || !sv.ServesOnNode(nodeIndex) {
			return core.Errorf(core.ENOTFOUND, "job %q has no service %q on node %d", j.Name, svc, nodeIndex)
		}
		if sv.Type == job.ServiceSSH {
			return core.Errorf(core.ENOTFOUND, "service %s of job %s is SSH, which the application proxy does not carry: connect with `shoal job connect-ssh -n %s`", svc, j.Name, j.Name)
		}
		if j.CurrentAttemptID == "" || job.JobTerminal(j.Status) {
			return core.Errorf(core.ECONFLICT, "job %q is %s: its services are reachable only while it runs", j.Name, j.Status)
		}
		a, err := tx.GetAttempt(j.CurrentAttemptID)
		if err != nil {
			return err
		}
		if job.AttemptTerminal(a.Status) || nodeIndex < 0 || nodeIndex >= len(a.Ranks) {
			return core.Errorf(core.ECONFLICT, "job %q is not running on node %d", j.Name, nodeIndex)
		}
		rs := a.Ranks[nodeIndex]
		if rs.Status != job.AttemptRunning {
			return core.Errorf(core.EUNAVAILABLE, "job %q is %s on node %d: its service %s is not up yet", j.Name, strings.ToLower(rs.Status), nodeIndex, svc)
		}
		inst := reportedService(a, nodeIndex, svc)
		switch {
		case inst == nil || inst.Status == job.ServiceStatusStarting || inst.Addr == "" && inst.Status != job.ServiceStatusFailed:
			return core.Errorf(core.EUNAVAILABLE, "service %s of job %s is not listening yet on node %d", svc, j.Name, nodeIndex)
		case inst.Status == job.ServiceStatusFailed:
			return core.Errorf(core.ENOTFOUND, "service %s of job %s failed on node %d: %s", svc, j.Name, nodeIndex, inst.Error)
		}
		t = &computes.InstanceAppTarget{Addr: inst.Addr, BasePath: JobServicePath(j.Workspace, j.Name, nodeIndex, svc),
			StripPrefix: sv.Type == job.ServiceCustom, UID: inst.UID,
			ContainerID: inst.ContainerID, ContainerPID: inst.ContainerPID, NetNSPID: inst.NetNSPID}
		if sv.Type == job.ServiceJupyterLab {
			t.Token = s.jobServiceToken(a.ID, nodeIndex, svc)
		}
		t.Mark = s.rankMark(tx, rs, a)
		return nil
	})
	return t, err
}

// rankMark is the environment mark of rank rs's processes: its node's
// (when its provider can tell) and the attempt's and rank's own, so that
// another job's process on the same node is not taken for the rank's.
func (s *Services) rankMark(tx store.Tx, rs *job.RankStatus, a *job.Attempt) []string {
	n, err := tx.GetNode(rs.NodeID)
	if err != nil {
		return nil
	}
	loc, err := s.catalog.Location(n.Location)
	if err != nil {
		return nil
	}
	m, ok := s.Provider(loc).(node.NodeMarker)
	if !ok {
		return nil
	}
	mark := m.NodeMark(n)
	if len(mark) == 0 {
		return nil
	}
	return append(mark, "SHOAL_ATTEMPT_ID="+a.ID, "SHOAL_NODE_RANK="+strconv.Itoa(rs.Rank))
}

// onLoopback tells whether addr is 127.0.0.1:port.
func onLoopback(addr string, port int) bool {
	return addr == "127.0.0.1:"+strconv.Itoa(port)
}

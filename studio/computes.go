package studio

import (
	"io"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// computeRow is a line of the compute list.
type computeRow struct {
	*compute.Compute
	StateText string
	Owner     string
}

func (s *Studio) computesPage(q *req) error {
	if err := s.allow(q, identity.ActComputesRead); err != nil {
		return err
	}
	list, err := s.cfg.Svc.ListComputes(q.ctx, compute.ComputeFilter{Workspace: q.workspace})
	if err != nil {
		return err
	}
	var clusters, instances []computeRow
	for _, c := range list {
		row := computeRow{Compute: c.Redacted(), StateText: computeState(c), Owner: principalName(c.AssignedUser)}
		if c.IsInstance() {
			instances = append(instances, row)
		} else {
			row.Owner = principalName(c.CreatedBy)
			clusters = append(clusters, row)
		}
	}
	tab := "clusters"
	if q.r.URL.Query().Get("tab") == "instances" {
		tab = "instances"
	}
	return s.render(q, "computes", "Compute", "compute", map[string]any{
		"Tab": tab, "Clusters": clusters, "Instances": instances, "CanCreate": s.can(q, identity.ActComputesWrite),
	})
}

// formData is what the create and edit forms offer.
func (s *Studio) formData(q *req, kind string) map[string]any {
	cat := s.cfg.Svc.Catalog()
	var sizes []string
	seen := map[string]bool{}
	for _, l := range cat.Locations() {
		for _, sz := range cat.SizesAt(l) {
			if !seen[sz.Name] && sz.Supports(kind) {
				seen[sz.Name] = true
				sizes = append(sizes, sz.Name)
			}
		}
	}
	sort.Strings(sizes)
	var users []string
	if list, err := s.cfg.Svc.ListUsers(q.ctx); err == nil {
		for _, u := range list {
			users = append(users, u.Name)
		}
	}
	var locations []string
	for _, l := range cat.Locations() {
		locations = append(locations, l.Name)
	}
	// The user-assigned identities a compute may name (a compute's own
	// system-assigned identity is not one to pick): offered as
	// suggestions, since the API checks that each exists and is usable in
	// the workspace.
	var identities []string
	if list, err := s.cfg.Svc.ListIdentities(q.ctx); err == nil {
		for _, id := range list {
			if !id.System {
				identities = append(identities, id.Name)
			}
		}
	}
	sort.Strings(identities)
	rows := make([]int, compute.MaxInstanceSchedules)
	for i := range rows {
		rows[i] = i
	}
	return map[string]any{"Kind": kind, "Sizes": sizes, "Locations": locations, "DefaultLocation": cat.DefaultLocation(),
		"Users": users, "TimeZones": timeZones, "Identities": identities, "ScheduleRows": rows, "Days": weekDays}
}

func (s *Studio) newComputePage(q *req) error {
	if err := s.allow(q, identity.ActComputesWrite); err != nil {
		return err
	}
	kind := compute.ComputeTypeCluster
	title := "New compute cluster"
	if q.r.URL.Query().Get("type") == "instance" {
		kind, title = compute.ComputeTypeInstance, "New compute instance"
	}
	return s.render(q, "compute_new", title, "compute", s.formData(q, kind))
}

func (s *Studio) editComputePage(q *req) error {
	if err := s.allow(q, identity.ActComputesWrite); err != nil {
		return err
	}
	c, err := s.cfg.Svc.FindCompute(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	d := s.formData(q, c.Type)
	d["C"] = c.Redacted()
	return s.render(q, "compute_edit", "Edit "+c.Name, "compute", d)
}

// nodeGroup is a node state with its nodes, for the nodes table.
type nodeGroup struct {
	State string
	Nodes []nodeRow
}

// nodeRow is a node as the nodes table shows it. SSH is its connection
// string, as Azure's studio lists one per node: only when the cluster was
// created with SSH access and the node has an address.
type nodeRow struct {
	*node.Node
	SSH string
}

// nodeSSH is the connection string of node n of cluster c: the cluster's
// admin user at the node's address (public when it has one) and the port
// its SSH server listens on; "" when SSH is off or not served yet.
func nodeSSH(c *compute.Compute, n *node.Node) string {
	if c.SSHPublicAccessEnabled == nil || !*c.SSHPublicAccessEnabled {
		return ""
	}
	user := compute.InstanceAdminUsername
	if c.SSHSettings != nil && c.SSHSettings.AdminUsername != "" {
		user = c.SSHSettings.AdminUsername
	}
	return n.SSHConnectionString(user)
}

func (s *Studio) computePage(q *req) error {
	if err := s.allow(q, identity.ActComputesRead); err != nil {
		return err
	}
	c, err := s.cfg.Svc.FindCompute(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	if c.IsInstance() {
		return s.instancePage(q, c)
	}
	nodes, err := s.cfg.Svc.ListNodes(q.ctx, q.workspace, c.Name)
	if err != nil {
		return err
	}
	groups := map[string]*nodeGroup{}
	var order []*nodeGroup
	for _, st := range []string{node.NodeRunning, node.NodeIdle, node.NodePreparing, node.NodeLeaving, node.NodeUnusable, node.NodePreempted} {
		g := &nodeGroup{State: st}
		groups[st] = g
		order = append(order, g)
	}
	vcpus := 0
	for _, n := range nodes {
		if g := groups[n.State]; g != nil {
			g.Nodes = append(g.Nodes, nodeRow{Node: n, SSH: nodeSSH(c, n)})
		}
		if n.Holds() {
			vcpus += n.VCPUs
		}
	}
	queued, err := s.cfg.Svc.ListJobs(q.ctx, job.JobFilter{Workspace: q.workspace, Compute: c.Name, Statuses: []string{job.JobQueued}})
	if err != nil {
		return err
	}
	events, err := s.cfg.Svc.ListComputeEvents(q.ctx, q.workspace, c.Name)
	if err != nil {
		return err
	}
	if len(events) > 50 {
		events = events[len(events)-50:]
	}
	for i, j := 0, len(events)-1; i < j; i, j = i+1, j-1 {
		events[i], events[j] = events[j], events[i]
	}
	now := s.cfg.Now()
	// The last six hours, or the cluster's life when shorter, so that a
	// young cluster's nodes fill the chart rather than a sliver at its
	// right edge (at least ten seconds, so that one just made still has
	// a span to draw).
	from := now.Add(-6 * time.Hour)
	if c.CreatedOn.After(from) {
		from = c.CreatedOn
	}
	if now.Sub(from) < 10*time.Second {
		from = now.Add(-10 * time.Second)
	}
	window := now.Sub(from).Round(time.Second).String()
	if now.Sub(from) >= time.Minute {
		window = strings.TrimSuffix(now.Sub(from).Round(time.Minute).String(), "0s")
	}
	history, err := s.cfg.Svc.NodeHistory(q.ctx, q.workspace, c.Name, from)
	if err != nil {
		return err
	}
	all, err := s.cfg.Svc.NodeHistory(q.ctx, q.workspace, c.Name, c.CreatedOn)
	if err != nil {
		return err
	}
	cost := s.cfg.Svc.ClusterCost(all, now)
	quota := map[string]any{"VCPUs": vcpus}
	if loc, err := s.cfg.Svc.Catalog().Location(c.Location); err == nil {
		if size, ok := s.cfg.Svc.Catalog().Size(c.Size); ok {
			if c.Tier == compute.TierLowPriority {
				quota["Limit"], quota["What"] = loc.Quota.LowPriorityVCPUs, "low-priority vCPUs in "+loc.Name
			} else {
				quota["Limit"], quota["What"] = loc.Quota.FamilyLimit(size.Family), size.Family+" vCPUs in "+loc.Name
			}
		}
	}
	return s.render(q, "cluster", c.Name, "compute", map[string]any{
		"C": c.Redacted(), "State": computeState(c), "Groups": order, "Nodes": len(nodes), "Queued": queued, "Events": events,
		"SSH":   c.SSHPublicAccessEnabled != nil && *c.SSHPublicAccessEnabled,
		"Chart": stackedChart(history, from, now), "Window": window,
		"Cost": cost, "Quota": quota, "CanWrite": s.can(q, identity.ActComputesWrite), "CanDelete": s.can(q, identity.ActComputesDelete),
	})
}

func (s *Studio) instancePage(q *req, c *compute.Compute) error {
	// The page offers what the API would allow this viewer: operations by
	// role (a workspace Owner or Contributor may start, stop and restart
	// someone else's instance), interactive use (SSH, applications,
	// postponing its shutdown, single sign-on) to the instance's user alone.
	owner := s.isOwner(q, c)
	setupLog := ""
	if f, err := s.cfg.Svc.OpenInstanceLog(q.ctx, q.workspace, c.Name, "setup"); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
		f.Close()
		setupLog = string(b)
	}
	var schedules []*compute.ComputeStartStopSchedule
	if c.Schedules != nil {
		schedules = c.Schedules.ComputeStartStop
	}
	rows := make([]scheduleRow, compute.MaxInstanceSchedules)
	for i := range rows {
		var sc *compute.ComputeStartStopSchedule
		if i < len(schedules) {
			sc = schedules[i]
		}
		rows[i] = newScheduleRow(i, sc)
	}
	sso := c.EnableSSO != nil && *c.EnableSSO
	apps := make([]appView, 0, len(c.Applications))
	for _, a := range c.Applications {
		v := appView{Name: a.DisplayName, Running: a.Running, Ready: a.Ready}
		// A link only where the proxy would serve it: to the instance's
		// user, with single sign-on on, once the application answers.
		if owner && sso && a.Ready {
			v.URL = a.EndpointURI
		}
		apps = append(apps, v)
	}
	ssh := ""
	if owner {
		ssh = c.SSHConnectionString
	}
	activity := []string{"a Jupyter kernel busy or a terminal session", "an SSH session", "a job running on the instance", "a custom application running"}
	canSchedule := s.can(q, identity.ActComputesUpdateSchedules)
	return s.render(q, "instance", c.Name, "compute", map[string]any{
		"C": c.Redacted(), "State": computeState(c), "Owner": owner, "OwnerName": principalName(c.AssignedUser),
		"Schedules": rows, "SetupLog": setupLog, "Activity": activity, "SSH": ssh, "SSO": sso,
		"CanStart": s.can(q, identity.ActComputesStart), "CanStop": s.can(q, identity.ActComputesStop), "CanRestart": s.can(q, identity.ActComputesRestart),
		"CanWrite": s.can(q, identity.ActComputesWrite), "CanDelete": s.can(q, identity.ActComputesDelete),
		"CanSchedule": canSchedule, "CanPostpone": owner && canSchedule, "CanEnableSSO": owner && !sso && s.can(q, identity.ActComputesEnableSSO),
		"Apps": apps, "Days": weekDays,
	})
}

// appView is an application as the instance page lists it; URL is empty
// where the proxy would refuse the viewer (or the application is not
// answering yet).
type appView struct {
	Name, URL      string
	Running, Ready bool
}

// weekDays are the days a recurrence's week_days names, as the editor
// offers them.
var weekDays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// frequencies are a recurrence's periods, as the API takes them.
var frequencies = []string{"Minute", "Hour", "Day", "Week", "Month"}

// option is a <select>'s choice.
type option struct {
	Value, Label string
	Selected     bool
}

// scheduleRow is one row of the schedules editor. It holds every field of
// a stored schedule (so that saving a row unchanged stores it unchanged),
// and Original, the schedule as stored, which the page's script sends back
// verbatim for rows the viewer did not touch.
type scheduleRow struct {
	Index                               int
	Action, Type, Expression            string
	Interval, Hours, Minutes, MonthDays string
	StartTime, EndTime                  string
	Frequencies, Zones                  []option
	Enabled                             bool
	Days                                map[string]bool
	Original                            string
}

// newScheduleRow is the editor's row i for sc (nil: an empty row, a daily
// cron in UTC until the viewer fills it in).
func newScheduleRow(i int, sc *compute.ComputeStartStopSchedule) scheduleRow {
	r := scheduleRow{Index: i, Type: compute.TriggerCron, Enabled: true, Days: map[string]bool{}}
	freq, zone := "Day", "UTC"
	if sc != nil {
		r.Original = jsonString(sc)
		r.Action = strings.ToLower(sc.Action)
		r.Enabled = !strings.EqualFold(sc.State, compute.ScheduleDisabled)
		zone = ""
		if t := sc.Trigger; t != nil {
			r.Type, r.Expression, zone = strings.ToLower(t.Type), t.Expression, t.TimeZone
			r.StartTime, r.EndTime = t.StartTime, t.EndTime
			if t.Frequency != "" {
				freq = t.Frequency
			}
			if t.Interval != 0 {
				r.Interval = itoa(t.Interval)
			}
			if p := t.Schedule; p != nil {
				r.Hours, r.Minutes, r.MonthDays = intList(p.Hours), intList(p.Minutes), intList(p.MonthDays)
				for _, d := range p.WeekDays {
					for _, name := range weekDays {
						if strings.EqualFold(d, name) {
							r.Days[name] = true
						}
					}
				}
			}
		}
	}
	// The stored spelling is the option's value, so that it goes back
	// as it came; a frequency or zone the lists lack is offered too.
	found := false
	for _, f := range frequencies {
		o := option{Value: f, Label: f}
		if strings.EqualFold(f, freq) {
			o.Value, o.Selected, found = freq, true, true
		}
		r.Frequencies = append(r.Frequencies, o)
	}
	if !found {
		r.Frequencies = append(r.Frequencies, option{Value: freq, Label: freq, Selected: true})
	}
	found = false
	for _, z := range timeZones {
		o := option{Value: z, Label: z, Selected: z == zone}
		found = found || o.Selected
		r.Zones = append(r.Zones, o)
	}
	switch {
	case zone == "":
		// Stored without a zone: UTC, and left unset when saved.
		r.Zones = append([]option{{Value: "", Label: "UTC (not set)", Selected: true}}, r.Zones...)
	case !found:
		r.Zones = append([]option{{Value: zone, Label: zone, Selected: true}}, r.Zones...)
	}
	return r
}

// intList writes a list of whole numbers as the editor's fields hold them:
// "8,18".
func intList(l compute.IntList) string {
	parts := make([]string, len(l))
	for i, n := range l {
		parts[i] = itoa(n)
	}
	return strings.Join(parts, ",")
}

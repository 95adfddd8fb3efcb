package cost

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Groupings are the report's group-by keys (tag:NAME too).
var Groupings = []string{"compute", "node", "size", "tier", "user", "job", "tag:NAME"}

// IdleKey is the report line of node time no job used (grouped by user or job).
const IdleKey = "(idle)"

// DeletedSuffix marks a cost report line of a compute that is gone, or
// that was deleted and created again under its name: "cpu (deleted)",
// apart from the present compute's line.
const DeletedSuffix = " (deleted)"

// CostReport prices a workspace's node time in [since, until) from the
// usage ledger, grouped by compute, node, size, tier, tag:NAME (the
// compute's tag, the seed's cost-tracking tags), user or job (the job's
// submitter or name: the time its ranks ran; the rest of the node time is
// the (idle) line, so that every grouping adds up to the same total).
func (c *Costs) CostReport(ctx context.Context, workspace string, since, until time.Time, groupBy string) ([]money.CostLine, error) {
	if err := c.cfg.Auth.Authorize(ctx, identity.PrincipalFrom(ctx), workspace, identity.ActComputesRead); err != nil {
		return nil, err
	}
	tag, byTag := strings.CutPrefix(groupBy, "tag:")
	switch {
	case byTag && tag == "":
		return nil, core.FieldErrorf("group_by", "tag: needs a tag name, e.g. tag:team")
	case byTag, groupBy == "compute", groupBy == "node", groupBy == "size", groupBy == "tier", groupBy == "user", groupBy == "job":
	default:
		return nil, core.FieldErrorf("group_by", "%q must be one of %s", groupBy, strings.Join(Groupings, ", "))
	}
	if !since.Before(until) {
		return nil, core.FieldErrorf("since", "%s is not before %s", since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	lines := map[string]*money.CostLine{}
	add := func(key string, d time.Duration, size string, low bool) {
		l := lines[key]
		if l == nil {
			l = &money.CostLine{Key: key}
			lines[key] = l
		}
		usd := d.Hours() * c.Price(size, low)
		l.NodeSeconds += d.Seconds()
		if low {
			l.LowPriority += usd
		} else {
			l.Dedicated += usd
		}
	}
	err := c.cfg.Store.View(ctx, func(tx store.Tx) error {
		usage, err := tx.ListNodeUsage(workspace, since, until)
		if err != nil {
			return err
		}
		// A node belongs to the compute of its name that was there when
		// it was made: one made before that compute's creation was an
		// earlier compute's, deleted since, whose line and tags are not
		// the present one's.
		present := map[string]*compute.Compute{}
		if byTag || groupBy == "compute" {
			computes, err := tx.ListComputes(compute.ComputeFilter{Workspace: workspace})
			if err != nil {
				return err
			}
			for _, comp := range computes {
				present[strings.ToLower(comp.Name)] = comp
			}
		}
		current := func(u *node.NodeUsage) *compute.Compute {
			c := present[strings.ToLower(u.Compute)]
			if c == nil || u.CreatedOn.Before(c.CreatedOn) {
				return nil
			}
			return c
		}
		if groupBy != "user" && groupBy != "job" {
			for _, u := range usage {
				var k string
				switch {
				case byTag:
					if c := current(u); c != nil {
						k = c.Tags[tag]
					}
					if k == "" {
						k = "(untagged)"
					}
				case groupBy == "compute":
					k = u.Compute
					if current(u) == nil {
						k += DeletedSuffix
					}
				case groupBy == "node":
					k = u.NodeID
				case groupBy == "size":
					k = u.Size
				case groupBy == "tier":
					k = tierName(u.LowPriority)
				}
				add(k, u.Overlap(since, until), u.Size, u.LowPriority)
			}
			return nil
		}
		// By user or job: each rank's run on its node, the rest idle.
		busy, err := c.rankUsage(tx, workspace, usage, since, until)
		if err != nil {
			return err
		}
		used := map[*node.NodeUsage]time.Duration{}
		for _, r := range busy {
			k := r.job.CreatedBy
			if groupBy == "job" {
				k = r.job.Name
			}
			if k == "" {
				k = principalName(r.job.CreatedByPrincipal)
			}
			add(k, r.d, r.node.Size, r.node.LowPriority)
			used[r.node] += r.d
		}
		for _, u := range usage {
			if idle := u.Overlap(since, until) - used[u]; idle > 0 {
				add(IdleKey, idle, u.Size, u.LowPriority)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]money.CostLine, 0, len(lines))
	for _, l := range lines {
		l.USD = l.Dedicated + l.LowPriority
		l.NodeHours = l.NodeSeconds / 3600
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].USD != out[j].USD {
			return out[i].USD > out[j].USD
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// tierName names a tier as a report line does.
func tierName(low bool) string {
	if low {
		return compute.TierLowPriority
	}
	return compute.TierDedicated
}

// principalName is a principal's ID without its kind ("user:").
func principalName(id string) string {
	_, n, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	return n
}

// rankRun is a rank's time on a node within a window.
type rankRun struct {
	job  *job.Job
	node *node.NodeUsage
	d    time.Duration
}

// rankUsage returns the time each rank of the workspace's jobs ran on a
// node of the ledger within [since, until).
func (c *Costs) rankUsage(tx store.Tx, workspace string, usage []*node.NodeUsage, since, until time.Time) ([]rankRun, error) {
	byNode := map[string][]*node.NodeUsage{}
	for _, u := range usage {
		byNode[u.NodeID] = append(byNode[u.NodeID], u)
	}
	jobs, err := tx.ListJobs(job.JobFilter{Workspace: workspace})
	if err != nil {
		return nil, err
	}
	var out []rankRun
	for _, j := range jobs {
		if j.StartTime == nil || !j.StartTime.Before(until) || (j.EndTime != nil && !j.EndTime.After(since)) {
			continue
		}
		attempts, err := tx.ListAttempts(j.Workspace, j.Name)
		if err != nil {
			return nil, err
		}
		for _, a := range attempts {
			for _, r := range a.Ranks {
				if r.StartTime == nil {
					continue
				}
				end := until
				if r.EndTime != nil && r.EndTime.Before(end) {
					end = *r.EndTime
				}
				start := *r.StartTime
				if start.Before(since) {
					start = since
				}
				if !end.After(start) {
					continue
				}
				for _, u := range byNode[r.NodeID] {
					// The node's life that held this run.
					if !u.CreatedOn.After(*r.StartTime) && (u.ReleasedOn == nil || !u.ReleasedOn.Before(start)) {
						out = append(out, rankRun{job: j, node: u, d: u.Overlap(start, end)})
						break
					}
				}
			}
		}
	}
	return out, nil
}

// JobCost prices a job's ranks on their nodes (from the ledger) up to
// now.
func (c *Costs) JobCost(tx store.Tx, j *job.Job, now time.Time) (*job.JobCost, error) {
	if j.StartTime == nil {
		return &job.JobCost{}, nil
	}
	attempts, err := tx.ListAttempts(j.Workspace, j.Name)
	if err != nil {
		return nil, err
	}
	usage, err := tx.ListNodeUsage(j.Workspace, *j.StartTime, now.Add(time.Second))
	if err != nil {
		return nil, err
	}
	byNode := map[string]*node.NodeUsage{}
	for _, u := range usage {
		byNode[u.NodeID] = u
	}
	jc := &job.JobCost{}
	for _, a := range attempts {
		for _, r := range a.Ranks {
			if r.StartTime == nil {
				continue
			}
			end := now
			if r.EndTime != nil {
				end = *r.EndTime
			}
			d := end.Sub(*r.StartTime)
			if d <= 0 {
				continue
			}
			jc.NodeSeconds += d.Seconds()
			if u := byNode[r.NodeID]; u != nil {
				jc.USD += d.Hours() * c.Price(u.Size, u.LowPriority)
			}
		}
	}
	jc.NodeSeconds = math.Round(jc.NodeSeconds*1000) / 1000
	jc.USD = math.Round(jc.USD*1e6) / 1e6
	return jc, nil
}

// ParseSince reads "30d", "12h", "90m" or an RFC 3339 time, back from now.
func ParseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && days >= 0 && fmt.Sprint(days) == n {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, core.FieldErrorf("since", "%q is neither a duration such as 30d or 12h nor an RFC 3339 time", v)
}

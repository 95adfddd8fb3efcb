package serverless

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Serverless pool naming: "sls-<size>[-<location>]-<tier>". Azure's 24
// character limit on compute names rules out the longer
// "serverless-<size>-<tier>".
const (
	serverlessNamePrefix = "sls-"
	serverlessTierStd    = "std"
	serverlessTierSpot   = "spot"
)

// DefaultMaxInstances bounds a serverless pool whose quota is
// unlimited (a negative limit); otherwise the quota bounds it.
const DefaultMaxInstances = 100

// Description is the description of every serverless pool.
const Description = "serverless compute: created and managed by Shoal for jobs that name no compute"

// Creator is the created_by of a serverless pool: Shoal, not the
// user whose job caused it.
const Creator = "shoal (serverless)"

// Tier maps queue_settings.job_tier to the tier of the pool a
// serverless job runs on: spot is low_priority (Azure's spot tier runs on
// low-priority VMs); standard, basic, premium, null and none are dedicated.
func Tier(jobTier string) string {
	if strings.EqualFold(strings.TrimSpace(jobTier), "spot") {
		return compute.TierLowPriority
	}
	return compute.TierDedicated
}

// Pool is where a serverless job runs: one pool per location,
// size and tier in a workspace.
type Pool struct {
	Name     string
	Location *catalog.Location
	Size     *catalog.Size
	Tier     string
}

// PlanPool chooses the pool of a serverless job in a workspace
// whose location is workspaceLocation. The size is
// resources.instance_type, or by default the smallest CPU size offered
// (fewest vCPUs, then least memory, then lowest price, then name). The
// location is the workspace's when it offers the size for the tier, else
// the first location in configuration order that does. A size no location
// offers is EINVALID on resources.instance_type, naming the sizes that
// exist.
func PlanPool(cat *catalog.Catalog, workspaceLocation string, spec *job.JobSpec) (*Pool, error) {
	tier := compute.TierDedicated
	if spec.QueueSettings != nil {
		tier = Tier(spec.QueueSettings.JobTier)
	}
	locs := serverlessLocations(cat, workspaceLocation)
	want := ""
	if spec.Resources != nil {
		want = strings.TrimSpace(spec.Resources.InstanceType)
	}
	var loc *catalog.Location
	var size *catalog.Size
	if want == "" {
		for _, l := range locs {
			if s := smallestCPUSize(cat, l, tier); s != nil {
				loc, size = l, s
				break
			}
		}
		if size == nil {
			return nil, core.FieldErrorf("resources.instance_type", "no location offers a CPU size for serverless %s compute; name a size", tier)
		}
	} else {
		s, ok := cat.Size(want)
		if !ok {
			return nil, core.FieldErrorf("resources.instance_type", "unknown VM size %q%s; sizes offered for serverless compute: %s",
				want, core.DidYouMean(want, serverlessSizeNames(cat, locs, tier)), strings.Join(serverlessSizeNames(cat, locs, tier), ", "))
		}
		for _, l := range locs {
			if serverlessUsable(cat, l, s, tier) {
				loc, size = l, s
				break
			}
		}
		if size == nil {
			why := "no location offers it"
			if tier == compute.TierLowPriority && !s.LowPriorityCapable {
				why = "it cannot run on spot (low-priority) capacity"
			} else if s.GPUs > 0 {
				why = "no location that offers it has GPUs"
			}
			return nil, core.FieldErrorf("resources.instance_type", "%q cannot be used for serverless %s compute: %s; sizes offered: %s",
				s.Name, tier, why, strings.Join(serverlessSizeNames(cat, locs, tier), ", "))
		}
	}
	home := ""
	if len(locs) > 0 && locs[0].Name == canonicalLocation(cat, workspaceLocation) {
		home = locs[0].Name
	}
	return &Pool{Name: PoolName(size.Name, loc.Name, tier, loc.Name == home), Location: loc, Size: size, Tier: tier}, nil
}

// PoolName is the name of the pool of size, location and tier:
// "sls-<size>-<tier>" (size lower-cased, without "Standard_" and
// punctuation; tier std or spot), with the location after the size unless
// atHome (the pool is at the workspace's location). A name past
// Azure's 24 characters keeps its start and ends with a hash of the
// whole, so that it stays unique and deterministic.
func PoolName(size, location, tier string, atHome bool) string {
	t := serverlessTierStd
	if tier == compute.TierLowPriority {
		t = serverlessTierSpot
	}
	body := alnumLower(strings.TrimPrefix(strings.ToLower(size), "standard_"))
	if !atHome {
		body += "-" + alnumLower(location)
	}
	name := serverlessNamePrefix + body + "-" + t
	if len(name) <= 24 {
		return name
	}
	sum := sha256.Sum256([]byte(strings.ToLower(size) + "|" + strings.ToLower(location) + "|" + tier))
	h := hex.EncodeToString(sum[:])[:4]
	room := 24 - len(serverlessNamePrefix) - len(h) - 1 - len(t)
	body = strings.TrimRight(body[:room], "-")
	return serverlessNamePrefix + body + h + "-" + t
}

// MaxInstances is the max_instances of a serverless pool: as
// many nodes of size as the quota for its tier allows (low-priority vCPUs;
// or the smallest of the family's dedicated limit, the location's total
// and the workspace's own limit for the family when it has one, given as
// workspaceLimit with hasOwn), DefaultMaxInstances when
// unlimited, and never fewer than need (the job's nodes: a quota too small
// leaves the job queued with quota_exceeded, as on a cluster).
func MaxInstances(loc *catalog.Location, size *catalog.Size, tier string, workspaceLimit int, hasOwn bool, need int) int {
	var lim int
	if tier == compute.TierLowPriority {
		lim = loc.Quota.LowPriorityVCPUs
	} else {
		lim = minLimit(loc.Quota.FamilyLimit(size.Family), loc.Quota.TotalDedicatedVCPUs)
		if hasOwn {
			lim = minLimit(lim, workspaceLimit)
		}
	}
	n := DefaultMaxInstances
	if lim >= 0 {
		n = lim / size.VCPUs
	}
	return min(max(n, need, 1), compute.MaxClusterNodes)
}

// minLimit is the smaller of two quota limits, a negative one being
// unlimited.
func minLimit(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func canonicalLocation(cat *catalog.Catalog, name string) string {
	if l, err := cat.Location(name); err == nil {
		return l.Name
	}
	return ""
}

// serverlessLocations lists the workspace's location first, then the
// others in configuration order.
func serverlessLocations(cat *catalog.Catalog, workspaceLocation string) []*catalog.Location {
	var out []*catalog.Location
	home, err := cat.Location(workspaceLocation)
	if err == nil {
		out = append(out, home)
	}
	for _, l := range cat.Locations() {
		if l != home {
			out = append(out, l)
		}
	}
	return out
}

func serverlessUsable(cat *catalog.Catalog, loc *catalog.Location, s *catalog.Size, tier string) bool {
	return cat.Offers(loc, s) && s.Supports(compute.ComputeTypeCluster) &&
		(s.GPUs == 0 || loc.GPUs.Available) && (tier != compute.TierLowPriority || s.LowPriorityCapable)
}

func smallestCPUSize(cat *catalog.Catalog, loc *catalog.Location, tier string) *catalog.Size {
	var best *catalog.Size
	for _, s := range cat.SizesAt(loc) {
		if s.GPUs > 0 || !serverlessUsable(cat, loc, s, tier) {
			continue
		}
		if best == nil || smallerSize(s, best) {
			best = s
		}
	}
	return best
}

func smallerSize(a, b *catalog.Size) bool {
	if a.VCPUs != b.VCPUs {
		return a.VCPUs < b.VCPUs
	}
	if a.MemoryGB != b.MemoryGB {
		return a.MemoryGB < b.MemoryGB
	}
	if a.PricePerHour != b.PricePerHour {
		return a.PricePerHour < b.PricePerHour
	}
	return a.Name < b.Name
}

// serverlessSizeNames lists the sizes some location offers for the tier,
// sorted, once each.
func serverlessSizeNames(cat *catalog.Catalog, locs []*catalog.Location, tier string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range locs {
		for _, s := range cat.SizesAt(l) {
			if !seen[s.Name] && serverlessUsable(cat, l, s, tier) {
				seen[s.Name] = true
				out = append(out, s.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func alnumLower(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

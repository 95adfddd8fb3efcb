package idle

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ongoingActivity lists what keeps the instance active right now, in a
// stable order: jobs, SSH, custom apps, kernels, CPU.
func ongoingActivity(p Policy, s Signals) []string {
	var out []string
	for _, j := range s.RunningJobs {
		out = append(out, "job "+j+" running")
	}
	if s.SSHSessions > 0 {
		out = append(out, "ssh: "+count(s.SSHSessions, "open session"))
	}
	for _, a := range s.CustomAppsRunning {
		out = append(out, "custom app "+a+" running")
	}
	for _, k := range s.Kernels {
		if k.ExecutionState == "busy" {
			out = append(out, "jupyter kernel "+kernelName(k)+" busy")
		}
	}
	if p.CPUPercentBelow > 0 && s.CPUKnown && s.CPUPercent >= p.CPUPercentBelow {
		out = append(out, "cpu "+percent(s.CPUPercent)+" ≥ "+percent(p.CPUPercentBelow))
	}
	return out
}

// lastActivity returns the latest past activity, no later than now, and
// what it was; zero when there was none. On a tie the first found wins,
// so the wording does not flip between passes.
func lastActivity(s Signals, now time.Time) (time.Time, string) {
	var last time.Time
	var what string
	seen := func(t time.Time, w string) {
		if t.After(now) {
			t = now // a clock ahead of ours
		}
		if t.After(last) {
			last, what = t, w
		}
	}
	for _, k := range s.Kernels {
		seen(k.LastActivity, "jupyter kernel "+kernelName(k))
	}
	for _, t := range s.Terminals {
		seen(t.LastActivity, "jupyter terminal "+t.Name)
	}
	seen(s.SSHLastActivity, "ssh traffic")
	seen(s.ProxyLastRequest, "app proxy request")
	return last, what
}

func kernelName(k Kernel) string {
	if k.Name != "" {
		return k.Name
	}
	return k.ID
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// percent prints a percentage with at most one decimal: "87%", "10.5%".
func percent(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + "%"
}

// stamp prints a time for people and logs, in UTC to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

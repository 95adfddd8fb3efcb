package studio

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/format"
	"github.com/shoal-ml/shoal/domain/job"
)

func itoa(n int) string { return strconv.Itoa(n) }

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// t renders a time the viewer's browser shows in their time zone
	// (static.js); without JavaScript it reads in UTC.
	"t": func(v any) template.HTML {
		var tm time.Time
		switch x := v.(type) {
		case time.Time:
			tm = x
		case *time.Time:
			if x == nil {
				return ""
			}
			tm = *x
		default:
			return ""
		}
		if tm.IsZero() {
			return ""
		}
		u := tm.UTC()
		return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time>`, u.Format(time.RFC3339), u.Format("2006-01-02 15:04:05 UTC")))
	},
	"deref": func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	},
	// on reads an optional switch of a compute (nil: off).
	"on":    func(p *bool) bool { return p != nil && *p },
	"path":  url.PathEscape,
	"query": url.QueryEscape,
	"lower": strings.ToLower,
	// money, hours and num print figures by format's one rule, as the
	// CLI's tables do.
	"money": func(f float64) string { return "$" + format.USD(f) },
	"hours": format.Number,
	"num":   format.Number,
	"join":  strings.Join,
	"state": stateClass,
	// trigger says a schedule's trigger in words.
	"trigger": describeTrigger,
	"add":     func(a, b int) int { return a + b },
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	},
	"json": func(v any) string { return jsonString(v) },
	// steps are the step statuses the pipeline graph's legend names, and
	// stepclass their colours' class.
	"steps": func() []string {
		return []string{job.JobCompleted, job.JobRunning, job.JobQueued, job.JobFailed, job.JobCanceled, job.JobNotStarted}
	},
	"stepclass": stepClass,
}

// stateClass is the CSS class of a state badge.
func stateClass(s string) string {
	switch strings.ToLower(s) {
	case "running", "succeeded", "completed", "steady", "idle", "ready":
		return "ok"
	case "failed", "unusable", "setupfailed", "createfailed", "preempted", "canceled":
		return "bad"
	case "":
		return "none"
	}
	return "busy"
}

// principalName shows "user:alice" as "alice".
func principalName(id string) string {
	if k, n, ok := strings.Cut(id, ":"); ok && k == "user" {
		return n
	}
	return id
}

// computeState is a compute's state as the studio shows it: an
// instance's state, or a cluster's provisioning/allocation state.
func computeState(c *compute.Compute) string {
	if c.IsInstance() {
		if c.State != "" {
			return c.State
		}
		return c.ProvisioningState
	}
	if c.ProvisioningState != compute.ProvisioningSucceeded || c.AllocationState == "" {
		return c.ProvisioningState
	}
	return c.AllocationState
}

// Package scalewindow decides a cluster's effective min_instances and
// max_instances under its scale windows (the Shoal key `scale_windows`):
// the bounds of the window whose trigger fired last, or the cluster's own
// when none has fired yet or the last to fire is a "back to normal" entry
// without bounds. Nights: `0 20 * * *` → max 0; mornings: `0 7 * * 1-5`
// → min 2, max 8.
//
// It is pure: every function takes the time it decides at.
package scalewindow

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// Window is one compiled scale window.
type Window struct {
	// Spec is the window as written.
	Spec *dschedule.ScaleWindow
	// When is its compiled trigger.
	When *schedule.Schedule
}

// Zone names the window's time zone as written ("W. Europe Standard
// Time"), or UTC.
func (w Window) Zone() string {
	if z := strings.TrimSpace(w.Spec.Trigger.TimeZone); z != "" {
		return z
	}
	return "UTC"
}

// Compile checks and compiles a cluster's scale windows against its own
// bounds (min_instances, max_instances): at most
// dschedule.MaxScaleWindows, names present and unique, bounds whole and
// 0..compute.MaxClusterNodes with min ≤ max, triggers compiled by the
// schedule engine. Errors are *core.Error fields named from the spec's
// root ("scale_windows[1].trigger.expression").
func Compile(windows []*dschedule.ScaleWindow) ([]Window, error) {
	if n := len(windows); n > dschedule.MaxScaleWindows {
		return nil, core.FieldErrorf("scale_windows", "at most %d scale windows are allowed per cluster, got %d", dschedule.MaxScaleWindows, n)
	}
	seen := map[string]int{}
	out := make([]Window, 0, len(windows))
	for i, w := range windows {
		at := fmt.Sprintf("scale_windows[%d]", i)
		if w == nil {
			return nil, core.FieldErrorf(at, "must be a window with name and trigger")
		}
		name := w.Name
		if err := checkName(name, at+".name"); err != nil {
			return nil, err
		}
		if j, dup := seen[strings.ToLower(name)]; dup {
			return nil, core.FieldErrorf(at+".name", "%q is already the name of scale_windows[%d]; window names must be unique", name, j)
		}
		seen[strings.ToLower(name)] = i
		for _, b := range []struct {
			key string
			v   *int
		}{{"min_instances", w.MinInstances}, {"max_instances", w.MaxInstances}} {
			if b.v != nil && (*b.v < 0 || *b.v > compute.MaxClusterNodes) {
				return nil, core.FieldErrorf(at+"."+b.key, "must be from 0 to %d, got %d", compute.MaxClusterNodes, *b.v)
			}
		}
		if w.MinInstances != nil && w.MaxInstances != nil && *w.MinInstances > *w.MaxInstances {
			return nil, core.FieldErrorf(at+".max_instances", "must be greater than or equal to min_instances (%d), got %d", *w.MinInstances, *w.MaxInstances)
		}
		s, err := schedule.CompileTrigger(w.Trigger, at)
		if err != nil {
			return nil, err
		}
		out = append(out, Window{Spec: w, When: s})
	}
	return out, nil
}

// checkName accepts names as compute names read: letters, digits, '-'
// and '_', 1 to 32 characters, so a name reads well in a sentence.
func checkName(name, field string) error {
	if strings.TrimSpace(name) == "" {
		return core.FieldErrorf(field, "is required: the window's name, e.g. nights")
	}
	if len(name) > 32 {
		return core.FieldErrorf(field, "must be at most 32 characters, got %d", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return core.FieldErrorf(field, "%q may hold only letters, digits, '-' and '_'", name)
		}
	}
	return nil
}

// Bounds are a cluster's effective scale bounds at a time.
type Bounds struct {
	// Min and Max are the effective min_instances and max_instances.
	Min, Max int
	// Window is the window in force (nil: the cluster's own bounds, none
	// having fired or the last being "back to normal" — then Name says
	// which, "" when none fired).
	Window *Window
	// Name is the name of the window that fired last ("" for none).
	Name string
	// Since is when it fired (zero for none).
	Since time.Time
	// Next is when any window fires next (zero: never), NextName its name.
	Next     time.Time
	NextName string
	// fired is the window that fired last, for its time zone.
	fired *Window
}

// Effective returns the bounds at now of a cluster whose own bounds are
// baseMin and baseMax, under its compiled windows: the last window to fire
// at or before now wins; two firing at the same instant, the later in the
// list wins (write the exception after the rule). A window's max below
// the min in force lowers the min with it; a window's min alone above the
// cluster's max raises the max with it. Next is the next firing that
// changes the bounds: nights firing again on Saturday after Friday's
// changes nothing, so a weekend's nights run until Monday's morning.
func Effective(windows []Window, baseMin, baseMax int, now time.Time) Bounds {
	b := effectiveAt(windows, baseMin, baseMax, now)
	t := now
	for range maxLookahead {
		var next time.Time
		for i := range windows {
			if n := windows[i].When.Next(t); !n.IsZero() && (next.IsZero() || n.Before(next)) {
				next = n
			}
		}
		if next.IsZero() {
			break
		}
		if a := effectiveAt(windows, baseMin, baseMax, next); a.Min != b.Min || a.Max != b.Max || a.Window == nil != (b.Window == nil) {
			b.Next, b.NextName = next, a.Name
			break
		}
		t = next
	}
	return b
}

// maxLookahead bounds the firings Effective walks to find the next change
// (a minute-by-minute window that changes nothing would walk forever).
const maxLookahead = 64

// effectiveAt is Effective without the next change.
func effectiveAt(windows []Window, baseMin, baseMax int, now time.Time) Bounds {
	b := Bounds{Min: baseMin, Max: baseMax}
	var last *Window
	for i := range windows {
		w := &windows[i]
		if p := w.When.Prev(now); !p.IsZero() && !p.Before(b.Since) {
			b.Since, last = p, w
		}
	}
	if last == nil {
		return b
	}
	b.Name, b.fired = last.Spec.Name, last
	if last.Spec.MinInstances == nil && last.Spec.MaxInstances == nil {
		return b // back to normal
	}
	b.Window = last
	if v := last.Spec.MaxInstances; v != nil {
		b.Max = *v
	}
	if v := last.Spec.MinInstances; v != nil {
		b.Min = *v
		if last.Spec.MaxInstances == nil {
			b.Max = max(b.Max, b.Min)
		}
	}
	b.Min = min(b.Min, b.Max)
	return b
}

// Of compiles c's windows and returns its bounds at now; ok is false for
// a compute without windows (or whose windows no longer compile, which
// validation at create prevents: its own bounds then apply).
func Of(c *compute.Compute, now time.Time) (Bounds, bool) {
	if c == nil || len(c.ScaleWindows) == 0 || c.MinInstances == nil || c.MaxInstances == nil {
		return Bounds{}, false
	}
	ws, err := Compile(c.ScaleWindows)
	if err != nil {
		return Bounds{Min: *c.MinInstances, Max: *c.MaxInstances}, false
	}
	return Effective(ws, *c.MinInstances, *c.MaxInstances, now), true
}

// State is b as `compute show` prints it (dschedule.ScaleWindowState).
func (b Bounds) State() *dschedule.ScaleWindowState {
	st := &dschedule.ScaleWindowState{MinInstances: b.Min, MaxInstances: b.Max, NextWindow: b.NextName}
	if b.Window != nil {
		st.Window = b.Window.Spec.Name
		since := b.Since.UTC()
		st.Since = &since
	}
	if !b.Next.IsZero() {
		next := b.Next.UTC()
		st.NextChange = &next
	}
	return st
}

// Changed reports whether the stored state (nil: none stored) says
// something else than b: another window in force, or other bounds
// (tonight's nights after last night's is no change).
func (b Bounds) Changed(stored *dschedule.ScaleWindowState) bool {
	cur := b.State()
	if stored == nil || stored.Window == "" {
		return cur.Window != ""
	}
	return stored.Window != cur.Window || stored.MinInstances != cur.MinInstances || stored.MaxInstances != cur.MaxInstances
}

// Until writes the end of the window in force for a sentence: "until
// 07:00 (W. Europe Standard Time)" when the next change is within a day,
// "until Mon 2 Jan 07:00 (…)" otherwise, "" when nothing changes it.
func (b Bounds) Until(now time.Time) string {
	if b.Next.IsZero() {
		return ""
	}
	zone := "UTC"
	loc := time.UTC
	if b.fired != nil {
		zone, loc = b.fired.Zone(), b.fired.When.Location()
	}
	next := b.Next.In(loc)
	layout := "15:04"
	if b.Next.Sub(now) >= 24*time.Hour {
		layout = "Mon 2 Jan 15:04"
	}
	return fmt.Sprintf(" until %s (%s)", next.Format(layout), zone)
}

// WaitReason is why a queued job waits while a window caps the cluster
// below what it needs: "max_instances is 0 in scale window nights until
// 07:00 (W. Europe Standard Time)"; "" when no window is in force.
func (b Bounds) WaitReason(now time.Time) string {
	if b.Window == nil {
		return ""
	}
	return fmt.Sprintf("max_instances is %d in scale window %s%s", b.Max, b.Window.Spec.Name, b.Until(now))
}

// Began is the event sentence of the change to b: "scale window nights
// began: min 0, max 0 until 07:00 (W. Europe Standard Time)", or "scale
// windows: back to min 0, max 4 (weekdays)" for the cluster's own bounds.
func (b Bounds) Began(now time.Time) string {
	if b.Window == nil {
		if b.Name != "" {
			return fmt.Sprintf("scale window %s began: back to the cluster's min %d, max %d%s", b.Name, b.Min, b.Max, b.Until(now))
		}
		return fmt.Sprintf("no scale window in force: back to the cluster's min %d, max %d%s", b.Min, b.Max, b.Until(now))
	}
	return fmt.Sprintf("scale window %s began: min %d, max %d%s", b.Window.Spec.Name, b.Min, b.Max, b.Until(now))
}

package scalewindow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/scalewindow"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

func ip(v int) *int { return &v }

func cron(name, expr, tz string, minN, maxN *int) *dschedule.ScaleWindow {
	return &dschedule.ScaleWindow{Name: name, Trigger: &dschedule.Trigger{Type: "cron", Expression: expr, TimeZone: tz}, MinInstances: minN, MaxInstances: maxN}
}

func compile(t *testing.T, ws ...*dschedule.ScaleWindow) []scalewindow.Window {
	t.Helper()
	out, err := scalewindow.Compile(ws)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return out
}

// nightsAndMornings is seed 001's example: nights to zero, weekday
// mornings to 2..8, in Amsterdam's time.
func nightsAndMornings(t *testing.T) []scalewindow.Window {
	return compile(t,
		cron("nights", "0 20 * * *", "W. Europe Standard Time", ip(0), ip(0)),
		cron("mornings", "0 7 * * 1-5", "W. Europe Standard Time", ip(2), ip(8)))
}

func TestEffectiveNightsAndMornings(t *testing.T) {
	ws := nightsAndMornings(t)
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	at := func(d, h, m int) time.Time { return time.Date(2026, time.January, d, h, m, 0, 0, ams) }
	// 2026-01-05 is a Monday.
	tests := []struct {
		name             string
		now              time.Time
		min, max         int
		window, nextName string
		next             time.Time
	}{
		{"monday noon: mornings", at(5, 12, 0), 2, 8, "mornings", "nights", at(5, 20, 0)},
		{"monday 20:00 exactly: nights began", at(5, 20, 0), 0, 0, "nights", "mornings", at(6, 7, 0)},
		{"tuesday 06:59: still nights", at(6, 6, 59), 0, 0, "nights", "mornings", at(6, 7, 0)},
		{"saturday noon: nights since friday, until monday", at(10, 12, 0), 0, 0, "nights", "mornings", at(12, 7, 0)},
		{"sunday 23:00: nights, next monday morning", at(11, 23, 0), 0, 0, "nights", "mornings", at(12, 7, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := scalewindow.Effective(ws, 1, 4, tc.now)
			if b.Min != tc.min || b.Max != tc.max || b.Name != tc.window || b.NextName != tc.nextName || !b.Next.Equal(tc.next) {
				t.Fatalf("got min %d max %d window %q next %s %s; want %d %d %q next %s %s", b.Min, b.Max, b.Name, b.NextName, b.Next, tc.min, tc.max, tc.window, tc.nextName, tc.next)
			}
		})
	}
}

func TestEffectiveNoneFiredKeepsClusterBounds(t *testing.T) {
	ws := compile(t, &dschedule.ScaleWindow{Name: "later", Trigger: &dschedule.Trigger{Type: "cron", Expression: "0 20 * * *", StartTime: "2030-01-01T00:00:00"}, MaxInstances: ip(0)})
	b := scalewindow.Effective(ws, 1, 4, time.Date(2026, 1, 1, 21, 0, 0, 0, time.UTC))
	if b.Min != 1 || b.Max != 4 || b.Window != nil || b.Name != "" {
		t.Fatalf("before any firing: got %+v, want the cluster's 1..4 and no window", b)
	}
	if want := time.Date(2030, 1, 1, 20, 0, 0, 0, time.UTC); !b.Next.Equal(want) {
		t.Fatalf("next change %s, want %s", b.Next, want)
	}
	if b.WaitReason(time.Time{}) != "" {
		t.Fatal("no window in force must give no wait reason")
	}
}

func TestEffectiveBackToNormal(t *testing.T) {
	ws := compile(t,
		cron("weekend", "0 0 * * 6", "UTC", nil, ip(0)),
		cron("weekdays", "0 0 * * 1", "UTC", nil, nil))
	// 2026-01-10 is a Saturday; the 12th a Monday.
	sat := scalewindow.Effective(ws, 1, 4, time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC))
	if sat.Max != 0 || sat.Min != 0 || sat.Window == nil {
		t.Fatalf("saturday: got %+v, want max 0 and min lowered to 0", sat)
	}
	mon := scalewindow.Effective(ws, 1, 4, time.Date(2026, 1, 12, 12, 0, 0, 0, time.UTC))
	if mon.Min != 1 || mon.Max != 4 || mon.Window != nil || mon.Name != "weekdays" {
		t.Fatalf("monday: got %+v, want the cluster's own 1..4 under the entry weekdays", mon)
	}
	if !strings.Contains(mon.Began(time.Date(2026, 1, 12, 12, 0, 0, 0, time.UTC)), "back to the cluster's min 1, max 4") {
		t.Fatalf("event sentence %q", mon.Began(time.Time{}))
	}
}

// Two windows firing at the same instant: the later in the list wins,
// so an exception is written after its rule.
func TestEffectiveOverlapLaterEntryWins(t *testing.T) {
	ws := compile(t,
		cron("nights", "0 20 * * *", "UTC", ip(0), ip(0)),
		cron("friday-batch", "0 20 * * 5", "UTC", ip(4), ip(4)))
	fri := time.Date(2026, 1, 9, 21, 0, 0, 0, time.UTC)
	if b := scalewindow.Effective(ws, 0, 2, fri); b.Name != "friday-batch" || b.Min != 4 || b.Max != 4 {
		t.Fatalf("friday: got %+v, want friday-batch 4..4", b)
	}
	thu := time.Date(2026, 1, 8, 21, 0, 0, 0, time.UTC)
	if b := scalewindow.Effective(ws, 0, 2, thu); b.Name != "nights" || b.Max != 0 {
		t.Fatalf("thursday: got %+v, want nights", b)
	}
}

func TestEffectiveMinAloneRaisesMax(t *testing.T) {
	ws := compile(t, cron("rush", "0 8 * * *", "UTC", ip(6), nil))
	b := scalewindow.Effective(ws, 0, 2, time.Date(2026, 1, 8, 9, 0, 0, 0, time.UTC))
	if b.Min != 6 || b.Max != 6 {
		t.Fatalf("got %d..%d, want 6..6", b.Min, b.Max)
	}
}

// Daylight saving time: a 07:00 window in Amsterdam begins at 06:00 UTC
// in winter and 05:00 UTC in summer, and the change of clocks neither
// skips nor repeats it.
func TestEffectiveAcrossDST(t *testing.T) {
	ws := nightsAndMornings(t)
	// Spring forward in Europe: Sunday 2026-03-29 02:00 → 03:00.
	winter := scalewindow.Effective(ws, 1, 4, time.Date(2026, 3, 27, 5, 59, 0, 0, time.UTC)) // Friday 06:59 CET
	if winter.Name != "nights" {
		t.Fatalf("friday 06:59 CET: %q, want nights", winter.Name)
	}
	if want := time.Date(2026, 3, 27, 6, 0, 0, 0, time.UTC); !winter.Next.Equal(want) {
		t.Fatalf("winter next %s, want %s", winter.Next.UTC(), want)
	}
	summer := scalewindow.Effective(ws, 1, 4, time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)) // Sunday
	if want := time.Date(2026, 3, 30, 5, 0, 0, 0, time.UTC); !summer.Next.Equal(want) || summer.NextName != "mornings" {
		t.Fatalf("summer sunday next %s %s, want mornings at %s (07:00 CEST)", summer.NextName, summer.Next.UTC(), want)
	}
	if sun := scalewindow.Effective(ws, 1, 4, time.Date(2026, 3, 29, 18, 0, 0, 0, time.UTC)); !sun.Since.Equal(time.Date(2026, 3, 29, 18, 0, 0, 0, time.UTC)) {
		t.Fatalf("sunday's nights began at %s, want 18:00 UTC (20:00 CEST)", sun.Since.UTC())
	}
	monday := scalewindow.Effective(ws, 1, 4, time.Date(2026, 3, 30, 5, 0, 0, 0, time.UTC)) // 07:00 CEST
	if monday.Name != "mornings" || monday.Min != 2 {
		t.Fatalf("monday 07:00 CEST: %+v, want mornings", monday)
	}
}

func TestSentences(t *testing.T) {
	ws := nightsAndMornings(t)
	now := time.Date(2026, 1, 5, 20, 30, 0, 0, time.UTC) // monday 21:30 CET
	b := scalewindow.Effective(ws, 1, 4, now)
	if got, want := b.WaitReason(now), "max_instances is 0 in scale window nights until 07:00 (W. Europe Standard Time)"; got != want {
		t.Fatalf("wait reason %q, want %q", got, want)
	}
	if got, want := b.Began(now), "scale window nights began: min 0, max 0 until 07:00 (W. Europe Standard Time)"; got != want {
		t.Fatalf("event %q, want %q", got, want)
	}
	fri := time.Date(2026, 1, 9, 20, 30, 0, 0, time.UTC)
	if got := scalewindow.Effective(ws, 1, 4, fri).WaitReason(fri); !strings.Contains(got, "until Mon 12 Jan 07:00") {
		t.Fatalf("a change more than a day away names its day: %q", got)
	}
}

func TestChangedOncePerFiring(t *testing.T) {
	ws := nightsAndMornings(t)
	mon := time.Date(2026, 1, 5, 20, 30, 0, 0, time.UTC)
	b := scalewindow.Effective(ws, 1, 4, mon)
	if !b.Changed(nil) {
		t.Fatal("a window in force with nothing stored is a change")
	}
	st := b.State()
	st.NextChange, st.NextWindow = nil, "" // what the loop stores
	if later := scalewindow.Effective(ws, 1, 4, mon.Add(time.Hour)); later.Changed(st) {
		t.Fatal("the same firing an hour later is no change")
	}
	if tue := scalewindow.Effective(ws, 1, 4, mon.Add(24*time.Hour)); tue.Changed(st) {
		t.Fatal("tuesday's nights after monday's changes nothing")
	}
	if tue := scalewindow.Effective(ws, 1, 4, mon.Add(12*time.Hour)); !tue.Changed(st) {
		t.Fatal("tuesday's mornings is a change")
	}
	if none := scalewindow.Effective(nil, 1, 4, mon); none.Changed(nil) || none.Changed(&dschedule.ScaleWindowState{MinInstances: 1, MaxInstances: 4}) {
		t.Fatal("no window, nothing stored (or none stored): no change")
	}
}

func TestCompileRefusals(t *testing.T) {
	tests := []struct {
		name  string
		ws    []*dschedule.ScaleWindow
		field string
		text  string
	}{
		{"six fields", []*dschedule.ScaleWindow{cron("nights", "0 0 20 * * *", "", nil, ip(0))}, "scale_windows[0].trigger.expression", ""},
		{"february 31", []*dschedule.ScaleWindow{cron("nights", "0 0 31 2 *", "", nil, ip(0))}, "scale_windows[0].trigger.expression", ""},
		{"unknown zone", []*dschedule.ScaleWindow{cron("nights", "0 20 * * *", "Mars Standard Time", nil, ip(0))}, "scale_windows[0].trigger.time_zone", ""},
		{"no trigger", []*dschedule.ScaleWindow{{Name: "nights", MaxInstances: ip(0)}}, "scale_windows[0].trigger", ""},
		{"min > max", []*dschedule.ScaleWindow{cron("nights", "0 20 * * *", "", ip(3), ip(2))}, "scale_windows[0].max_instances", "min_instances (3)"},
		{"negative min", []*dschedule.ScaleWindow{cron("nights", "0 20 * * *", "", ip(-1), nil)}, "scale_windows[0].min_instances", "from 0"},
		{"huge max", []*dschedule.ScaleWindow{cron("nights", "0 20 * * *", "", nil, ip(10001))}, "scale_windows[0].max_instances", "from 0"},
		{"no name", []*dschedule.ScaleWindow{cron(" ", "0 20 * * *", "", nil, ip(0))}, "scale_windows[0].name", "required"},
		{"bad name", []*dschedule.ScaleWindow{cron("nights; rm", "0 20 * * *", "", nil, ip(0))}, "scale_windows[0].name", "letters"},
		{"name with a newline", []*dschedule.ScaleWindow{cron("nights\n", "0 20 * * *", "", nil, ip(0))}, "scale_windows[0].name", "letters"},
		{"name padded", []*dschedule.ScaleWindow{cron(" nights", "0 20 * * *", "", nil, ip(0))}, "scale_windows[0].name", "letters"},
		{"long name", []*dschedule.ScaleWindow{cron(strings.Repeat("n", 33), "0 20 * * *", "", nil, ip(0))}, "scale_windows[0].name", "at most 32"},
		{"end before start", []*dschedule.ScaleWindow{{Name: "n", Trigger: &dschedule.Trigger{Type: "cron", Expression: "0 20 * * *", StartTime: "2026-02-01T00:00:00", EndTime: "2026-01-01T00:00:00"}, MaxInstances: ip(0)}}, "scale_windows[0].trigger.end_time", "after start_time"},
		{"duplicate", []*dschedule.ScaleWindow{cron("nights", "0 20 * * *", "", nil, ip(0)), cron("Nights", "0 21 * * *", "", nil, ip(0))}, "scale_windows[1].name", "unique"},
		{"null entry", []*dschedule.ScaleWindow{nil}, "scale_windows[0]", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scalewindow.Compile(tc.ws)
			var ce *core.Error
			if err == nil || !asCore(err, &ce) || ce.Code != core.EINVALID || ce.Field != tc.field || !strings.Contains(ce.Message, tc.text) {
				t.Fatalf("got %v (%+v), want EINVALID on %s containing %q", err, ce, tc.field, tc.text)
			}
		})
	}
	many := make([]*dschedule.ScaleWindow, dschedule.MaxScaleWindows+1)
	for i := range many {
		many[i] = cron("w"+strings.Repeat("x", i), "0 20 * * *", "", nil, ip(0))
	}
	if _, err := scalewindow.Compile(many); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("too many windows: %v", err)
	}
}

func asCore(err error, out **core.Error) bool {
	ce, ok := err.(*core.Error)
	*out = ce
	return ok
}

// A window's end_time stops it firing again; the bounds it set stay until
// another window fires (here the "back to normal" entry).
func TestEffectiveAfterEndTime(t *testing.T) {
	ws := compile(t,
		&dschedule.ScaleWindow{Name: "freeze", Trigger: &dschedule.Trigger{Type: "cron", Expression: "0 0 * * *", StartTime: "2026-12-24T00:00:00", EndTime: "2026-12-27T00:00:00"}, MaxInstances: ip(0)},
		&dschedule.ScaleWindow{Name: "thaw", Trigger: &dschedule.Trigger{Type: "cron", Expression: "0 0 2 1 *"}})
	mid := scalewindow.Effective(ws, 1, 4, time.Date(2026, 12, 30, 12, 0, 0, 0, time.UTC))
	if mid.Name != "freeze" || mid.Max != 0 || mid.NextName != "thaw" || !mid.Next.Equal(time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("after the freeze's end_time: %+v, want freeze in force until thaw on 2 Jan", mid)
	}
	after := scalewindow.Effective(ws, 1, 4, time.Date(2027, 1, 3, 0, 0, 0, 0, time.UTC))
	if after.Window != nil || after.Min != 1 || after.Max != 4 {
		t.Fatalf("after the thaw: %+v, want the cluster's own", after)
	}
}

package idle

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is the fake clock's origin; at(m) is m minutes later.
var t0 = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

func at(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }

// policy30 is the policy most tests use: 30 minutes, a 10% CPU floor and
// a warning 5 minutes ahead.
var policy30 = Policy{Minutes: 30, CPUPercentBelow: 10, WarnBefore: 5 * time.Minute}

// instance carries the State from pass to pass, as the server does.
type instance struct {
	p  Policy
	st State
}

func started(p Policy, now time.Time) *instance { return &instance{p: p, st: Reset(State{}, now)} }

func (in *instance) pass(s Signals, now time.Time) Decision {
	var d Decision
	in.st, d = Evaluate(in.p, in.st, s, now)
	return d
}

func hasActivity(d Decision, sub string) bool {
	return slices.ContainsFunc(d.Activity, func(a string) bool { return strings.Contains(a, sub) })
}

// TestEachActivityAloneKeepsTheInstanceActive runs every kind of activity
// on its own for an hour (twice the idle time), then ends it and checks
// the idle clock starts from that activity's end and the instance is
// warned, then stopped, on time.
func TestEachActivityAloneKeepsTheInstanceActive(t *testing.T) {
	const tail = 30 * time.Second // traffic after the last pass that saw the activity
	busy := func(last time.Time) []Kernel {
		return []Kernel{{ID: "k1", Name: "python3", ExecutionState: "busy", LastActivity: last, Connections: 1}}
	}
	quiet := func(last time.Time) []Kernel {
		return []Kernel{{ID: "k1", Name: "python3", ExecutionState: "idle", LastActivity: last, Connections: 1}}
	}
	cases := []struct {
		name string
		// during is the signal while the activity goes on at now; after
		// once it ended, its last trace at ended.
		during, after func(now time.Time) Signals
		// ongoing kinds hold the clock at 0 (Decision.Active); the
		// others keep moving its start.
		ongoing bool
		// stamped kinds leave a time of last activity: the clock starts
		// there, not at the last pass that saw them.
		stamped bool
		word    string
	}{
		{
			name:    "job",
			during:  func(time.Time) Signals { return Signals{RunningJobs: []string{"train-1"}} },
			after:   func(time.Time) Signals { return Signals{} },
			ongoing: true, word: "job train-1 running",
		},
		{
			name: "ssh session (quiet but open)",
			during: func(now time.Time) Signals {
				return Signals{SSHSessions: 1, SSHLastActivity: now.Add(-2 * time.Hour)}
			},
			after:   func(ended time.Time) Signals { return Signals{SSHLastActivity: ended} },
			ongoing: true, stamped: true, word: "ssh: 1 open session",
		},
		{
			name:    "custom app",
			during:  func(time.Time) Signals { return Signals{CustomAppsRunning: []string{"rstudio"}} },
			after:   func(time.Time) Signals { return Signals{} },
			ongoing: true, word: "custom app rstudio running",
		},
		{
			name:    "busy kernel (long cell, no output)",
			during:  func(now time.Time) Signals { return Signals{Kernels: busy(now.Add(-2 * time.Hour))} },
			after:   func(ended time.Time) Signals { return Signals{Kernels: quiet(ended)} },
			ongoing: true, stamped: true, word: "jupyter kernel python3 busy",
		},
		{
			name:    "cpu above the floor",
			during:  func(time.Time) Signals { return Signals{CPUPercent: 87, CPUKnown: true} },
			after:   func(time.Time) Signals { return Signals{CPUPercent: 3, CPUKnown: true} },
			ongoing: true, word: "cpu 87% ≥ 10%",
		},
		{
			name:    "kernel activity",
			during:  func(now time.Time) Signals { return Signals{Kernels: quiet(now.Add(-10 * time.Second))} },
			after:   func(ended time.Time) Signals { return Signals{Kernels: quiet(ended)} },
			stamped: true, word: "last: jupyter kernel python3 at",
		},
		{
			name: "terminal activity",
			during: func(now time.Time) Signals {
				return Signals{Terminals: []Terminal{{Name: "1", LastActivity: now.Add(-10 * time.Second)}}}
			},
			after: func(ended time.Time) Signals {
				return Signals{Terminals: []Terminal{{Name: "1", LastActivity: ended}}}
			},
			stamped: true, word: "last: jupyter terminal 1 at",
		},
		{
			name:    "ssh traffic",
			during:  func(now time.Time) Signals { return Signals{SSHLastActivity: now.Add(-10 * time.Second)} },
			after:   func(ended time.Time) Signals { return Signals{SSHLastActivity: ended} },
			stamped: true, word: "last: ssh traffic at",
		},
		{
			name:    "app proxy request",
			during:  func(now time.Time) Signals { return Signals{ProxyLastRequest: now.Add(-10 * time.Second)} },
			after:   func(ended time.Time) Signals { return Signals{ProxyLastRequest: ended} },
			stamped: true, word: "last: app proxy request at",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := started(policy30, at(0))
			for m := 1; m <= 60; m++ {
				now := at(float64(m))
				d := in.pass(c.during(now), now)
				if d.Shutdown || d.Warn {
					t.Fatalf("minute %d: Shutdown=%v Warn=%v while %s (%s)", m, d.Shutdown, d.Warn, c.name, d.Reason)
				}
				if d.IdleMinutes != 0 || d.Active != c.ongoing || !hasActivity(d, c.word) {
					t.Fatalf("minute %d: idle %d min, Active=%v, Activity %q; want 0, %v, %q", m, d.IdleMinutes, d.Active, d.Activity, c.ongoing, c.word)
				}
				if c.ongoing && !d.IdleSince.Equal(now) {
					t.Fatalf("minute %d: IdleSince %v, want now", m, d.IdleSince)
				}
			}
			lastSeen := at(60)
			ended := lastSeen
			if c.stamped {
				ended = lastSeen.Add(tail)
			}
			var warnedAt, stoppedAt time.Time
			for m := 61; m <= 120 && stoppedAt.IsZero(); m++ {
				now := at(float64(m))
				d := in.pass(c.after(ended), now)
				if !d.IdleSince.Equal(ended) || d.Active {
					t.Fatalf("minute %d: IdleSince %v Active=%v, want %v (the end of the %s)", m, d.IdleSince, d.Active, ended, c.name)
				}
				if want := int(now.Sub(ended) / time.Minute); d.IdleMinutes != want {
					t.Fatalf("minute %d: IdleMinutes %d, want %d", m, d.IdleMinutes, want)
				}
				if d.Warn {
					if !warnedAt.IsZero() {
						t.Fatalf("minute %d: warned again (first at %v)", m, warnedAt)
					}
					warnedAt = now
				}
				if d.Shutdown {
					stoppedAt = now
					if !strings.Contains(d.Reason, "idle for 30 min ≥ idle_time_before_shutdown_minutes 30") {
						t.Errorf("shutdown reason %q", d.Reason)
					}
				}
			}
			// Passes are a minute apart: the first at or after the mark.
			wantWarn, wantStop := ended.Add(25*time.Minute), ended.Add(30*time.Minute)
			if c.stamped {
				wantWarn, wantStop = wantWarn.Add(time.Minute-tail), wantStop.Add(time.Minute-tail)
			}
			if !warnedAt.Equal(wantWarn) || !stoppedAt.Equal(wantStop) {
				t.Errorf("warned at %v, stopped at %v; want %v and %v", warnedAt, stoppedAt, wantWarn, wantStop)
			}
		})
	}
}

// TestActivityWording checks the wording and order `show` displays.
func TestActivityWording(t *testing.T) {
	s := Signals{
		RunningJobs:       []string{"train-1", "train-2"},
		SSHSessions:       2,
		CustomAppsRunning: []string{"rstudio"},
		Kernels:           []Kernel{{ID: "k1", Name: "python3", ExecutionState: "busy"}, {ID: "k2", Name: "ir", ExecutionState: "idle"}, {ID: "k3", ExecutionState: "busy"}},
		CPUPercent:        87.25, CPUKnown: true,
	}
	_, d := Evaluate(policy30, Reset(State{}, at(0)), s, at(1))
	want := []string{"job train-1 running", "job train-2 running", "ssh: 2 open sessions", "custom app rstudio running",
		"jupyter kernel python3 busy", "jupyter kernel k3 busy", "cpu 87.3% ≥ 10%"}
	if !slices.Equal(d.Activity, want) {
		t.Errorf("Activity\n got %q\nwant %q", d.Activity, want)
	}
	if !strings.HasPrefix(d.Reason, "active: job train-1 running; ") {
		t.Errorf("Reason %q", d.Reason)
	}

	_, d = Evaluate(policy30, Reset(State{}, at(0)), Signals{ProxyLastRequest: at(3)}, at(5))
	if want := []string{"last: app proxy request at 2025-01-06T09:03:00Z"}; !slices.Equal(d.Activity, want) {
		t.Errorf("idle Activity %q, want %q", d.Activity, want)
	}
	// A reset after the last activity: the clock started at the reset.
	_, d = Evaluate(policy30, Reset(State{}, at(4)), Signals{ProxyLastRequest: at(3)}, at(5))
	if len(d.Activity) != 0 || d.Activity == nil || !d.IdleSince.Equal(at(4)) {
		t.Errorf("after a reset: Activity %#v, IdleSince %v; want empty (not nil) and %v", d.Activity, d.IdleSince, at(4))
	}
}

// TestOpenQuietKernelDoesNotCount follows Jupyter's culler: a kernel that
// is connected, or stuck in "starting", but silent is idle since its
// last_activity.
func TestOpenQuietKernelDoesNotCount(t *testing.T) {
	for _, state := range []string{"idle", "starting", "dead", ""} {
		in := started(policy30, at(0))
		k := []Kernel{{ID: "k1", Name: "python3", ExecutionState: state, LastActivity: at(1), Connections: 3}}
		d := in.pass(Signals{Kernels: k}, at(31))
		if !d.Shutdown || !d.IdleSince.Equal(at(1)) {
			t.Errorf("kernel %q with 3 connections, quiet since minute 1: at minute 31 Shutdown=%v IdleSince=%v (%s)", state, d.Shutdown, d.IdleSince, d.Reason)
		}
	}
}

func TestCPUFloor(t *testing.T) {
	cases := []struct {
		name   string
		floor  float64
		cpu    float64
		known  bool
		active bool
	}{
		{"below", 10, 9.9, true, false},
		{"at the floor", 10, 10, true, true},
		{"above", 10, 87, true, true},
		{"unknown CPU never counts", 10, 99, false, false},
		{"floor off", 0, 99, true, false},
	}
	for _, c := range cases {
		p := policy30
		p.CPUPercentBelow = c.floor
		in := started(p, at(0))
		d := in.pass(Signals{CPUPercent: c.cpu, CPUKnown: c.known}, at(40))
		if d.Active != c.active || d.Shutdown == c.active {
			t.Errorf("%s: Active=%v Shutdown=%v, want active=%v (%s)", c.name, d.Active, d.Shutdown, c.active, d.Reason)
		}
		if !c.active && c.floor > 0 && !strings.Contains(d.Reason, "CPU below 10%") {
			t.Errorf("%s: shutdown reason %q does not name the floor", c.name, d.Reason)
		}
	}
}

func TestMinutesZeroNeverShutsDown(t *testing.T) {
	p := Policy{WarnBefore: 5 * time.Minute}
	in := started(p, at(0))
	var d Decision
	for m := 60; m <= 3*24*60; m += 60 {
		if d = in.pass(Signals{}, at(float64(m))); d.Shutdown || d.Warn {
			t.Fatalf("minute %d: Shutdown=%v Warn=%v with idle shutdown off", m, d.Shutdown, d.Warn)
		}
	}
	if d.IdleMinutes != 4320 || !d.IdleSince.Equal(at(0)) || !d.ShutdownAt.IsZero() {
		t.Errorf("after 3 days: IdleMinutes %d IdleSince %v ShutdownAt %v; want 4320, %v, zero", d.IdleMinutes, d.IdleSince, d.ShutdownAt, at(0))
	}
	if !strings.Contains(d.Reason, "off") {
		t.Errorf("Reason %q", d.Reason)
	}
}

func TestWarnOncePerIdlePeriod(t *testing.T) {
	in := started(policy30, at(0))
	var warns []time.Time
	activityAt := at(27) // the warned owner comes back
	for m := 1; m <= 80; m++ {
		now := at(float64(m))
		s := Signals{}
		if !now.Before(activityAt) {
			s.ProxyLastRequest = activityAt
		}
		d := in.pass(s, now)
		if d.Warn {
			warns = append(warns, now)
			if !strings.Contains(d.Reason, "stops at") || !d.ShutdownAt.Equal(now.Add(5*time.Minute)) {
				t.Errorf("minute %d: warning %q, ShutdownAt %v", m, d.Reason, d.ShutdownAt)
			}
		}
		if d.Shutdown {
			if m != 57 {
				t.Errorf("stopped at minute %d, want 57", m)
			}
			break
		}
	}
	if want := []time.Time{at(25), at(52)}; !slices.EqualFunc(warns, want, time.Time.Equal) {
		t.Errorf("warnings at %v, want %v (once per idle period)", warns, want)
	}
}

// TestLatePassStopsWithoutWarning: a pass that finds the deadline passed
// (the server was down) stops the instance rather than warn about a
// shutdown that is already late.
func TestLatePassStopsWithoutWarning(t *testing.T) {
	in := started(policy30, at(0))
	d := in.pass(Signals{}, at(45))
	if !d.Shutdown || d.Warn || d.IdleMinutes != 45 {
		t.Errorf("Shutdown=%v Warn=%v IdleMinutes=%d, want true false 45", d.Shutdown, d.Warn, d.IdleMinutes)
	}
}

func TestPostpone(t *testing.T) {
	in := started(policy30, at(0))
	if d := in.pass(Signals{}, at(25)); !d.Warn {
		t.Fatalf("no warning at minute 25: %s", d.Reason)
	}
	in.st = Postpone(in.st, at(27), time.Hour)
	if !in.st.IdleSince.Equal(at(27)) || !in.st.WarnedAt.IsZero() || !in.st.PostponedUntil.Equal(at(87)) {
		t.Fatalf("after Postpone: %+v", in.st)
	}
	var warned []int
	for m := 28; m <= 100; m++ {
		d := in.pass(Signals{}, at(float64(m)))
		if d.Warn {
			warned = append(warned, m)
		}
		if m == 57 && (d.Shutdown || !strings.Contains(d.Reason, "postponed until 2025-01-06T10:27:00Z")) {
			t.Errorf("minute 57, idle 30 but postponed: Shutdown=%v, Reason %q", d.Shutdown, d.Reason)
		}
		if d.Shutdown {
			if m != 87 || !d.IdleSince.Equal(at(27)) {
				t.Errorf("stopped at minute %d (idle since %v), want 87 (idle since minute 27)", m, d.IdleSince)
			}
			if !in.st.PostponedUntil.IsZero() {
				t.Errorf("a passed postponement is kept: %v", in.st.PostponedUntil)
			}
			break
		}
	}
	if !slices.Equal(warned, []int{82}) {
		t.Errorf("warned at minutes %v, want [82] (5 min before the postponed shutdown)", warned)
	}
}

func TestPostponeShorterThanTheIdleTime(t *testing.T) {
	in := started(policy30, at(0))
	in.st = Postpone(in.st, at(27), 10*time.Minute)
	if d := in.pass(Signals{}, at(40)); d.Shutdown {
		t.Errorf("stopped at minute 40: the postponement reset the clock at 27")
	}
	if d := in.pass(Signals{}, at(57)); !d.Shutdown {
		t.Errorf("not stopped at minute 57 (idle 30 since the postponement): %s", d.Reason)
	}
	// A second, shorter postponement does not shorten the first.
	st := Postpone(Postpone(State{}, at(0), 2*time.Hour), at(10), 10*time.Minute)
	if !st.PostponedUntil.Equal(at(120)) || !st.IdleSince.Equal(at(10)) {
		t.Errorf("postpone 2 h then 10 min: %+v", st)
	}
	if st := Postpone(State{}, at(0), 0); !st.PostponedUntil.IsZero() {
		t.Errorf("postpone by 0: %+v", st)
	}
}

func TestReset(t *testing.T) {
	prev := State{IdleSince: at(0), WarnedAt: at(25), PostponedUntil: at(90)}
	st := Reset(prev, at(26))
	if want := (State{IdleSince: at(26), PostponedUntil: at(90)}); st != want {
		t.Errorf("Reset = %+v, want %+v", st, want)
	}
}

// TestFirstEvaluationStartsTheClock: with no State yet, old traces do
// not stop an instance on the spot.
func TestFirstEvaluationStartsTheClock(t *testing.T) {
	s := Signals{Kernels: []Kernel{{Name: "python3", ExecutionState: "idle", LastActivity: at(-120)}}}
	st, d := Evaluate(policy30, State{}, s, at(0))
	if d.Shutdown || !d.IdleSince.Equal(at(0)) || !st.IdleSince.Equal(at(0)) {
		t.Errorf("first evaluation: Shutdown=%v IdleSince=%v", d.Shutdown, d.IdleSince)
	}
}

// TestClockSkew: times ahead of the server's are taken as now.
func TestClockSkew(t *testing.T) {
	in := started(policy30, at(0))
	d := in.pass(Signals{ProxyLastRequest: at(15), SSHLastActivity: at(12)}, at(10))
	if !d.IdleSince.Equal(at(10)) || d.IdleMinutes != 0 {
		t.Errorf("future activity: IdleSince %v IdleMinutes %d, want %v and 0", d.IdleSince, d.IdleMinutes, at(10))
	}
	in.st.IdleSince = at(50) // a State written by a clock ahead
	if d := in.pass(Signals{}, at(11)); !d.IdleSince.Equal(at(11)) || d.IdleMinutes != 0 {
		t.Errorf("future IdleSince: %v, %d min", d.IdleSince, d.IdleMinutes)
	}
}

// TestShortMinute rehearses idle shutdown with one-second minutes.
func TestShortMinute(t *testing.T) {
	p := Policy{Minutes: 30, WarnBefore: 5 * time.Second, Minute: time.Second}
	in := started(p, t0)
	if d := in.pass(Signals{}, t0.Add(29*time.Second)); d.Shutdown || !d.Warn || d.IdleMinutes != 29 {
		t.Errorf("at 29 s: Shutdown=%v Warn=%v IdleMinutes=%d", d.Shutdown, d.Warn, d.IdleMinutes)
	}
	if d := in.pass(Signals{}, t0.Add(30*time.Second)); !d.Shutdown {
		t.Errorf("at 30 s: no shutdown: %s", d.Reason)
	}
}

func TestNoWarningWhenWarnBeforeIsZero(t *testing.T) {
	in := started(Policy{Minutes: 30}, at(0))
	for m := 1; m < 30; m++ {
		if d := in.pass(Signals{}, at(float64(m))); d.Warn {
			t.Fatalf("warned at minute %d with WarnBefore 0", m)
		}
	}
}

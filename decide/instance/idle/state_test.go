package idle

import (
	"encoding/json"
	"testing"
	"time"
)

// TestOnMinutesChanged checks Azure's reset rule: a setting shorter than
// the time already idle puts the clock back to 0.
func TestOnMinutesChanged(t *testing.T) {
	idle20 := State{IdleSince: at(0), WarnedAt: at(0.5)}
	now := at(20)
	cases := []struct {
		name   string
		prev   State
		newMin int
		reset  bool
	}{
		{"idle 20, 30 → 15: reset", idle20, 15, true},
		{"idle 20, 30 → 60: kept", idle20, 60, false},
		{"idle 20, 30 → 20: reset (else the change itself would stop it)", idle20, 20, true},
		{"idle 20, 15 → 21: kept", idle20, 21, false},
		{"idle 20, off → 15: reset", idle20, 15, true},
		{"idle 20, 30 → off: kept", idle20, 0, false},
		{"idle 10, 30 → 15: kept, stops in 5 min", State{IdleSince: at(10)}, 15, false},
		{"clock not started: kept", State{}, 15, false},
	}
	for _, c := range cases {
		got := OnMinutesChanged(c.prev, c.newMin, time.Minute, now)
		want := c.prev
		if c.reset {
			want = State{IdleSince: now}
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v", c.name, got, want)
		}
	}
	// After the reset the instance is stopped 15 minutes later, not at once.
	in := &instance{p: Policy{Minutes: 15, WarnBefore: 5 * time.Minute}, st: OnMinutesChanged(idle20, 15, 0, now)}
	if d := in.pass(Signals{}, at(21)); d.Shutdown || d.IdleMinutes != 1 {
		t.Errorf("a minute after the change: Shutdown=%v IdleMinutes=%d", d.Shutdown, d.IdleMinutes)
	}
	if d := in.pass(Signals{}, at(35)); !d.Shutdown {
		t.Errorf("15 minutes after the change: not stopped: %s", d.Reason)
	}
	// The minute may be shortened to rehearse.
	if got := OnMinutesChanged(State{IdleSince: t0}, 15, time.Second, t0.Add(20*time.Second)); !got.IdleSince.Equal(t0.Add(20 * time.Second)) {
		t.Errorf("one-second minutes: %+v", got)
	}
}

// TestStateJSON: the server persists State; its keys are snake_case and
// unset times are left out.
func TestStateJSON(t *testing.T) {
	b, err := json.Marshal(State{IdleSince: at(0), PostponedUntil: at(60)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"idle_since":"2025-01-06T09:00:00Z","postponed_until":"2025-01-06T10:00:00Z"}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
	var back State
	if err := json.Unmarshal([]byte(`{"idle_since":"2025-01-06T09:00:00Z","warned_at":"2025-01-06T09:25:00Z"}`), &back); err != nil || !back.WarnedAt.Equal(at(25)) {
		t.Errorf("decode: %+v, %v", back, err)
	}
}

package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// WaitClock is how waits tell the time and sleep: injected so that a test
// runs a two-minute wait at once and counts the requests it made.
type WaitClock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

// wallClock is the real WaitClock.
type wallClock struct{}

// Now is the time of day.
func (wallClock) Now() time.Time { return time.Now() }

// Sleep waits d, or less if ctx ends first.
func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// clockOf returns g's clock, the wall clock unless a test set one.
func (g *Globals) clockOf() WaitClock {
	if g.Clock != nil {
		return g.Clock
	}
	return wallClock{}
}

// Poll intervals of a wait: the first check comes quickly (most
// operations are fast), then the interval doubles up to pollMax while
// nothing changes, and starts again at pollMin when something does. A
// two-minute wait costs a few dozen checks, not the 586 of a fixed 200 ms.
const (
	pollMin = 250 * time.Millisecond
	pollMax = 5 * time.Second
	// redrawEvery is how often a live status line's elapsed time is
	// redrawn between checks (no request is made for it).
	redrawEvery = time.Second
	// waitLimit is how long a wait goes on before giving up.
	waitLimit = 30 * time.Minute
)

// progressMode is how a wait shows its progress on stderr.
type progressMode int

const (
	// progressOff shows nothing: the user asked for a machine-readable
	// output with -o, and gets that alone.
	progressOff progressMode = iota
	// progressLines prints one line per change of state: stderr is a
	// file or a pipe, where a rewritten line would be noise.
	progressLines
	// progressLive keeps one status line rewritten in place (\r) with
	// the elapsed time: stderr is a terminal.
	progressLive
)

// machineOutputs are the -o formats a program reads: given explicitly,
// they silence progress (the default json does not: a person who typed
// no -o is shown what a wait waits for).
var machineOutputs = map[string]bool{"json": true, "jsonc": true, "yaml": true, "yamlc": true, "tsv": true, "csv": true, "none": true}

// Progress shows how a long wait goes, on stderr only: stdout keeps the
// command's result alone. Safe for concurrent use (a log stream and the
// poller that shows where its job is).
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	mode  progressMode
	clock WaitClock
	what  string
	began time.Time
	state string
	// drawn: a live line is on the screen and must be cleared before
	// anything else is written there.
	drawn bool
	done  bool
	// width is the terminal's width: a live line longer than it would
	// wrap, and \r would rewrite only its last row.
	width int
}

// NewProgress returns the progress of a wait described by what (e.g.
// "Deleting compute c"), shown as cmd's -o flag and stderr call for.
func (g *Globals) NewProgress(cmd *cobra.Command, what string) *Progress {
	mode := progressLines
	if f := cmd.Flags().Lookup("output"); f != nil && f.Changed && machineOutputs[g.Output] {
		mode = progressOff
	} else if IsTerminal(g.Stderr) {
		mode = progressLive
	}
	clock := g.clockOf()
	return &Progress{w: g.Stderr, mode: mode, clock: clock, what: what, began: clock.Now(), width: terminalWidth(g.Stderr)}
}

// terminalWidth is w's width in columns when it is a terminal, 80 when
// that cannot be told.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// Set records the wait's current state (a sentence, e.g. "waiting for 1
// running job: train (Running on node c-0)"). Plain lines print it when
// it changed; a live line shows it at once.
func (p *Progress) Set(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	changed := state != p.state
	p.state = state
	switch p.mode {
	case progressLines:
		if changed {
			fmt.Fprintln(p.w, p.line())
		}
	case progressLive:
		p.draw()
	}
}

// Tick redraws a live line with the time elapsed; other modes print
// nothing.
func (p *Progress) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done && p.mode == progressLive {
		p.draw()
	}
}

// Note prints a line that stays (what the command did, e.g. the jobs it
// canceled), under any live line.
func (p *Progress) Note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == progressOff {
		return
	}
	p.clear()
	fmt.Fprintln(p.w, EscapeControls(line, true))
	if p.mode == progressLive && p.state != "" && !p.done {
		p.draw()
	}
}

// Done ends the wait: a live line is cleared, so that what follows
// starts on a clean line; final, when not empty, is printed as a last
// line with the elapsed time (e.g. "deleted").
func (p *Progress) Done(final string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.mode == progressOff {
		return
	}
	p.clear()
	if final != "" {
		p.state = final
		fmt.Fprintln(p.w, p.line())
	}
}

// line is the status as a line of text: what, state and elapsed time.
func (p *Progress) line() string {
	head, tail := p.parts()
	return head + tail
}

// parts are the line's head (what and state) and tail (the elapsed
// time), apart so that a live line can cut the head and keep the time.
func (p *Progress) parts() (string, string) {
	elapsed := p.clock.Now().Sub(p.began).Truncate(time.Second)
	s := p.what
	if p.state != "" {
		s += ": " + p.state
	}
	// Names in the state come from the server: escaped, as all output
	// to a terminal is.
	return EscapeControls(s, true), fmt.Sprintf(" (%s)", elapsed)
}

// draw rewrites the live line in place, its head cut to fit the
// terminal's width.
func (p *Progress) draw() {
	head, tail := p.parts()
	if room := p.width - 1 - len(tail); room > 1 {
		if r := []rune(head); len(r) > room {
			head = string(r[:room-1]) + "…"
		}
	}
	fmt.Fprint(p.w, "\r"+head+tail+"\033[K")
	p.drawn = true
}

// clear erases a live line.
func (p *Progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// PollUntil calls check until it reports done, showing the state it
// returns on p, with the backoff of pollMin..pollMax; it gives up after
// waitLimit. p is not ended: the caller says how the wait ended.
func PollUntil(ctx context.Context, p *Progress, check func(context.Context) (state string, done bool, err error)) error {
	wait := pollMin
	last := ""
	for first := true; ; first = false {
		state, done, err := check(ctx)
		if err != nil || done {
			return err
		}
		if !first && state != last {
			wait = pollMin
		}
		last = state
		p.Set(state)
		if p.clock.Now().Sub(p.began) > waitLimit {
			return fmt.Errorf("%s: still not finished after %s (%s)", p.what, waitLimit, strings.TrimSpace(state))
		}
		// Between checks a live line's elapsed time moves on.
		for left := wait; left > 0; left -= redrawEvery {
			if err := p.clock.Sleep(ctx, min(left, redrawEvery)); err != nil {
				return err
			}
			p.Tick()
		}
		wait = min(2*wait, pollMax)
	}
}

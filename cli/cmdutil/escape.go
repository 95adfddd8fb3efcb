package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// isControl reports the runes a terminal acts on: C0 controls, DEL and
// the C1 controls (U+0080–U+009F; U+009B alone is a CSI on many
// terminals), and the bidirectional controls (U+202E and the like), which
// make a text read otherwise than it is.
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}

// writeEscaped writes r as a visible escape: \n, \t and \r by name, other
// bytes as \xNN, C1 controls as \uNNNN.
func writeEscaped(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\t':
		b.WriteString(`\t`)
	case '\r':
		b.WriteString(`\r`)
	default:
		if r < 0x80 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}

// EscapeControls makes what users wrote safe to print: every control
// character (and every byte that is not UTF-8) becomes a visible escape,
// except newlines and tabs when keepLines. Table and TSV cells escape all
// of them: a newline or a tab there would forge rows and columns.
func EscapeControls(s string, keepLines bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || isControl(r) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r) && !(keepLines && (r == '\n' || r == '\t')):
			writeEscaped(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// terminalWriter escapes a stream (a job's log) on its way to a terminal:
// lines and tabs pass, other control characters are shown escaped, so a
// job cannot drive its reader's terminal (retitle it, write its
// clipboard, clear it, fake a prompt). A rune cut between two writes is
// held until the next; Flush writes what is held.
type terminalWriter struct {
	w    io.Writer
	held []byte
}

func newTerminalWriter(w io.Writer) *terminalWriter { return &terminalWriter{w: w} }

// Write escapes p and writes it; it reports len(p) once written.
func (t *terminalWriter) Write(p []byte) (int, error) {
	data := append(t.held, p...)
	t.held = nil
	cut := len(data)
	// Hold back a trailing incomplete rune (at most 3 bytes).
	for i := len(data) - 1; i >= 0 && i >= len(data)-3; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	t.held = append([]byte(nil), data[cut:]...)
	if _, err := io.WriteString(t.w, EscapeControls(string(data[:cut]), true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete rune, escaped.
func (t *terminalWriter) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	s := EscapeControls(string(t.held), true)
	t.held = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// IsTerminal reports whether w is a terminal; a variable so that tests
// can stand in for one.
var IsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// LogOut returns where to write a log for the user, and a function to
// call when done: stdout itself when it is a file or a pipe (the bytes as
// the job wrote them), an escaping writer when it is a terminal.
func (g *Globals) LogOut() (io.Writer, func() error) {
	if !IsTerminal(g.Stdout) {
		return g.Stdout, func() error { return nil }
	}
	tw := newTerminalWriter(g.Stdout)
	return tw, tw.Flush
}

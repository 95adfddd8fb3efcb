package cmdutil

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Table and TSV cells print what users wrote (names, descriptions, tags):
// every control character is escaped, so a value cannot move the cursor,
// retitle the terminal, or forge rows and columns.
func TestTableAndTSVEscapeControls(t *testing.T) {
	data := []map[string]string{{"name": "cpu", "description": "ok\x1b]0;pwned\x07\r\nfake-row\tfake-col\u009b2J\x7f\u202Eright-to-left"}}
	for _, format := range []string{"table", "tsv"} {
		var b bytes.Buffer
		if err := Render(&b, data, format, "", []string{"name", "description"}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\r\x7f\u009b\u202e") || strings.Count(out, "\n") != map[string]int{"table": 3, "tsv": 1}[format] {
			t.Errorf("%s: %q", format, out)
		}
		if format == "tsv" && strings.Count(out, "\t") != 1 {
			t.Errorf("tsv columns forged: %q", out)
		}
		if !strings.Contains(out, `ok\x1b]0;pwned\x07\r\nfake-row\tfake-col\u009b2J\x7f\u202eright-to-left`) {
			t.Errorf("%s: escapes not shown: %q", format, out)
		}
	}
}

// A log printed to a terminal keeps its lines and tabs and shows every
// other control character escaped, whatever the chunks it arrives in
// (a C1 control split across two writes included); to a file or a pipe
// the bytes pass as they are.
func TestTerminalWriterEscapesControls(t *testing.T) {
	in := "step 1\tok\n\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07done\r\nC1:\u009b31m é\x00\n"
	want := "step 1\tok\n\\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07done\\r\nC1:\\u009b31m é\\x00\n"
	for _, size := range []int{1, 2, 3, 7, len(in)} {
		var b bytes.Buffer
		w := newTerminalWriter(&b)
		for i := 0; i < len(in); i += size {
			if _, err := w.Write([]byte(in[i:min(i+size, len(in))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("chunks of %d: %q, want %q", size, b.String(), want)
		}
	}
	var b bytes.Buffer
	w := newTerminalWriter(&b)
	w.Write([]byte("ends in half a rune \xc2"))
	w.Flush()
	if b.String() != `ends in half a rune \xc2` {
		t.Errorf("a cut rune: %q", b.String())
	}
}

// Logs go to stdout escaped when it is a terminal, and as they are
// otherwise (a file keeps the job's bytes).
func TestLogOutEscapesOnlyForATerminal(t *testing.T) {
	for _, tty := range []bool{false, true} {
		old := IsTerminal
		IsTerminal = func(io.Writer) bool { return tty }
		var b bytes.Buffer
		g := &Globals{Stdout: &b}
		out, done := g.LogOut()
		out.Write([]byte("a\x1b[31mb\n"))
		done()
		IsTerminal = old
		want := map[bool]string{false: "a\x1b[31mb\n", true: "a\\x1b[31mb\n"}[tty]
		if b.String() != want {
			t.Errorf("terminal %t: %q, want %q", tty, b.String(), want)
		}
	}
}

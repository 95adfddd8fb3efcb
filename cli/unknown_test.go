package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A word that is no command of a group is named, with the nearest
// command, before any flag meant for the command is complained about; and
// a group followed by an unknown word fails instead of printing help.
func TestUnknownSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"job", "logs", "-n", "x"}, []string{`unknown command "logs" for "shoal job"`, `did you mean "stream"?`, "list-attempts"}},
		{[]string{"compute", "lsit"}, []string{`unknown command "lsit" for "shoal compute"`, `did you mean "list"?`}},
		{[]string{"-w", "ws", "compute", "-o", "table", "shwo", "-n", "a"}, []string{`unknown command "shwo" for "shoal compute"`, `did you mean "show"?`}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate" for "shoal"`}},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut)
		if code == 0 {
			t.Errorf("shoal %s: exit 0, stdout %q", strings.Join(tc.args, " "), out.String())
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("shoal %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut.String(), w)
			}
		}
	}
	// A group alone still shows its help, and help still works.
	for _, args := range [][]string{{"job"}, {"help", "job"}, {"job", "--help"}, {"job", "help"}} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "Available Commands") {
			t.Errorf("shoal %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
}

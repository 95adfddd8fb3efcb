package full

import (
	"io"
	"testing"

	"github.com/shoal-ml/shoal/cli"
	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// The CLI's stand-ins name exactly the full binary's own commands, with
// the same help line: a command added to Side without a stand-in would be
// missing from `shoal`, one removed would exec into an unknown command.
func TestStandInsMatchTheFullBinarysCommands(t *testing.T) {
	real := Side(&cmdutil.Globals{Stdout: io.Discard, Stderr: io.Discard})
	if len(real) != len(cli.SideCommands) {
		t.Fatalf("%d commands, %d stand-ins", len(real), len(cli.SideCommands))
	}
	for i, c := range real {
		s := cli.SideCommands[i]
		if c.Name() != s.Name || c.Short != s.Short {
			t.Errorf("command %q (%q), stand-in %q (%q)", c.Name(), c.Short, s.Name, s.Short)
		}
	}
}

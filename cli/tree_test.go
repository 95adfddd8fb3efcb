package cli

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// Every command's flags merge with the persistent ones without a clash
// (a clash panics at run time, so every command is visited here), and
// every command has help text.
func TestCommandTree(t *testing.T) {
	var out bytes.Buffer
	g := &cmdutil.Globals{Stdout: &out, Stderr: &out}
	root := newRootCommand(g)
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", c.CommandPath(), r)
				}
			}()
			c.InheritedFlags()
			c.LocalFlags()
		}()
		if c.Short == "" {
			t.Errorf("%s has no short help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

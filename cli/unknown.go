package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shoal-ml/shoal/domain/core"
)

// unknownSubcommand returns an error when args name a command group
// (`shoal job`) followed by a word that is none of its commands
// (`shoal job logs -n x`). Cobra would parse the group's flags first and
// answer about a flag the intended command has (`unknown shorthand flag:
// 'n'`), or print the group's help and succeed when no flag follows: the
// word the user got wrong is what the error must name, with the nearest
// commands.
func unknownSubcommand(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == nil || !cmd.HasSubCommands() || cmd.Runnable() {
		return nil // cobra's own checks apply
	}
	word := firstWord(cmd, rest)
	if word == "" || word == "help" {
		return nil // `shoal help job`, `shoal job help`: the group's help
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	// Cobra's suggestions know each command's SuggestFor words (`logs`
	// for `stream`) and prefixes; the project's edit distance the rest.
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	} else {
		msg += core.DidYouMean(word, names)
	}
	return fmt.Errorf("%s; its commands: %s (see `%s --help`)", msg, strings.Join(names, ", "), cmd.CommandPath())
}

// firstWord is the first argument of rest that is not a flag or a flag's
// value, read as cobra reads args to find a command: a flag the command
// does not know is taken to have a value, as cobra takes it.
func firstWord(cmd *cobra.Command, rest []string) string {
	cmd.InheritedFlags() // merges the parents' persistent flags into Flags()
	flags := cmd.Flags()
	takesValue := func(f *pflag.Flag) bool { return f == nil || f.NoOptDefVal == "" }
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		switch {
		case s == "--":
			if i+1 < len(rest) {
				return rest[i+1]
			}
			return ""
		case strings.HasPrefix(s, "--"):
			if !strings.Contains(s, "=") && takesValue(flags.Lookup(s[2:])) {
				i++
			}
		case strings.HasPrefix(s, "-") && len(s) > 1:
			if len(s) == 2 && takesValue(flags.ShorthandLookup(s[1:])) {
				i++
			}
		default:
			return s
		}
	}
	return ""
}

package runner

import (
	"slices"
	"testing"
)

func TestDirectArgv(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin"}
	for cmd, want := range map[string][]string{
		"true":                     {"/usr/bin/true"},
		"  sleep   0.1 ":           {"/usr/bin/sleep", "0.1"},
		"echo hello world":         {"/usr/bin/echo", "hello", "world"},
		"/bin/echo a=b --lr=0.1":   {"/bin/echo", "a=b", "--lr=0.1"},
		"exit 3":                   nil, // a builtin that differs from any program
		"cd /tmp":                  nil,
		"echo $HOME":               nil, // expansion
		"echo 'a b'":               nil, // quoting
		"echo a > f":               nil, // redirection
		"echo a; echo b":           nil,
		"echo a\necho b":           nil, // two commands
		"echo a\tb":                nil,
		"ls *.txt":                 nil, // globbing
		"LR=1 python train.py":     nil, // an assignment
		"no-such-program-here x":   nil, // the shell says "command not found"
		"./train.sh":               nil, // relative to the job's dir: the shell finds it
		"echo ~":                   nil,
		"":                         nil,
		"python3 -c print(1)":      nil, // parentheses
		"for i in 1 2; do :; done": nil,
	} {
		got := directArgv(cmd, env)
		if !slices.Equal(got, want) {
			t.Errorf("directArgv(%q) = %q, want %q", cmd, got, want)
		}
	}
	// A relative PATH entry depends on the working dir: the shell decides.
	if got := directArgv("true", []string{"PATH=bin:/usr/bin"}); got != nil {
		t.Errorf("with a relative PATH entry: %q", got)
	}
}

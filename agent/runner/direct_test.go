package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDirectArgv(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin"}
	for cmd, want := range map[string][]string{
		"true":                     {"/usr/bin/true", "true"},
		"  sleep   0.1 ":           {"/usr/bin/sleep", "sleep", "0.1"},
		"echo hello world":         {"/usr/bin/echo", "echo", "hello", "world"},
		"/bin/echo a=b --lr=0.1":   {"/bin/echo", "/bin/echo", "a=b", "--lr=0.1"},
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
		"echo caf\u00e9":           nil, // bytes outside ASCII: the shell decides
		"echo\u00a0hi":             nil, // a no-break space is part of a word to the shell
		"for i in 1 2; do :; done": nil,
	} {
		prog, got := directArgv(cmd, env)
		if want != nil {
			if prog != want[0] {
				t.Errorf("directArgv(%q) program %q, want %q", cmd, prog, want[0])
			}
			want = want[1:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("directArgv(%q) = %q, want %q", cmd, got, want)
		}
	}
	// A relative PATH entry depends on the working dir: the shell decides.
	if _, got := directArgv("true", []string{"PATH=bin:/usr/bin"}); got != nil {
		t.Errorf("with a relative PATH entry: %q", got)
	}
	// What bash reads first, or an exported function, may change what
	// the command means.
	for _, kv := range []string{"BASH_ENV=/etc/profile", "ENV=/x", "BASH_FUNC_echo%%=() { :; }"} {
		if _, got := directArgv("echo hi", []string{"PATH=/usr/bin", kv}); got != nil {
			t.Errorf("with %s: %q", kv, got)
		}
	}
}

// A plain command started directly sees what the shell would have given it:
// argv[0] as typed and PWD set to the working directory; an executable
// without a "#!" line, which exec refuses, is run by the shell.
func TestDirectStartMatchesTheShell(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "noshebang"), []byte("echo script-ran \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ command, want string }{
		{"cat /proc/self/cmdline", "cat\x00/proc/self/cmdline\x00"},
		{"printenv PWD", "<dir>\n"},
		{"noshebang hello", "script-ran hello\n"},
	} {
		t.Run(c.command, func(t *testing.T) {
			tk := task(t, c.command)
			tk.Env = map[string]string{"PATH": bin + ":/usr/bin:/bin", "PWD": "/somewhere/else"}
			if res, _ := run(t, tk); res.Reason != ReasonCompleted {
				t.Fatalf("result %+v", res)
			}
			b, err := os.ReadFile(tk.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(c.want, "<dir>", tk.Dir); string(b) != want {
				t.Errorf("output %q, want %q", b, want)
			}
		})
	}
}

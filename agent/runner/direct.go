package runner

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A command that is nothing but plain words — no quoting, expansion,
// redirection, globbing, assignment or control syntax — means the same
// whether a shell runs it or the runner starts its program directly, and
// starting it directly saves a shell's start-up on every job (most of the
// CPU a trivial job costs). Anything else goes to the shell.

// plainWord reports whether every byte of w is one a shell passes through
// untouched.
func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-./:,+@%=", c) >= 0:
		default:
			return false
		}
	}
	return w != ""
}

// shellOnly are the first words a shell treats itself (builtins and
// keywords whose behaviour differs from any program of the same name),
// so a command starting with one always goes to the shell. Builtins that
// behave as their programs do (true, false, echo, printf, test, pwd) are
// not listed: the program runs.
var shellOnly = map[string]bool{
	".": true, ":": true, "alias": true, "bg": true, "bind": true, "break": true, "builtin": true,
	"caller": true, "cd": true, "command": true, "compgen": true, "complete": true, "compopt": true,
	"continue": true, "declare": true, "dirs": true, "disown": true, "enable": true, "eval": true,
	"exec": true, "exit": true, "export": true, "fc": true, "fg": true, "getopts": true, "hash": true,
	"help": true, "history": true, "jobs": true, "kill": true, "let": true, "local": true, "logout": true,
	"mapfile": true, "popd": true, "pushd": true, "read": true, "readarray": true, "readonly": true,
	"return": true, "set": true, "shift": true, "shopt": true, "source": true, "suspend": true,
	"times": true, "trap": true, "type": true, "typeset": true, "ulimit": true, "umask": true,
	"unalias": true, "unset": true, "wait": true, "if": true, "then": true, "else": true, "elif": true,
	"fi": true, "case": true, "esac": true, "for": true, "while": true, "until": true, "do": true,
	"done": true, "function": true, "select": true, "time": true, "coproc": true,
}

// directArgv returns the program to start and its argv for a plain
// command, with the program resolved on the job's PATH (env) and argv[0]
// as typed (as a shell passes it), or "", nil when a shell must run it.
func directArgv(command string, env []string) (string, []string) {
	// Bytes outside ASCII are left to the shell, and words are split on
	// spaces only: a tab or a newline (two commands) is not a plain
	// word's byte, so such a command goes to the shell.
	for i := 0; i < len(command); i++ {
		if command[i] >= 0x80 {
			return "", nil
		}
	}
	var words []string
	for _, w := range strings.Split(command, " ") {
		if w == "" {
			continue
		}
		if !plainWord(w) {
			return "", nil
		}
		words = append(words, w)
	}
	// A first word with "=" assigns a variable.
	if len(words) == 0 || shellOnly[words[0]] || strings.Contains(words[0], "=") {
		return "", nil
	}
	// What bash reads before any command (BASH_ENV, ENV) or exported
	// functions that may shadow the program change what the command
	// means: the shell runs it.
	for _, kv := range env {
		if strings.HasPrefix(kv, "BASH_ENV=") || strings.HasPrefix(kv, "ENV=") || strings.HasPrefix(kv, "BASH_FUNC_") {
			return "", nil
		}
	}
	prog := lookPath(words[0], env)
	if prog == "" {
		return "", nil // the shell says "command not found" as users expect
	}
	return prog, words
}

// lookPath finds name as the job's shell would: a name with a slash as
// it is (relative to the job's dir, checked at start), otherwise the
// first executable file of that name on the job's PATH.
func lookPath(name string, env []string) string {
	if strings.Contains(name, "/") {
		if filepath.IsAbs(name) && executable(name) {
			return name
		}
		return ""
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			// A relative PATH entry depends on the working directory:
			// leave it to the shell.
			return ""
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p
		}
	}
	return ""
}

// executable reports whether p is a regular file this process may execute
// (its effective ids, as the shell checks, not just any x bit).
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) == nil
}

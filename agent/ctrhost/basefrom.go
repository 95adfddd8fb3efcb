package ctrhost

import (
	"bufio"
	"bytes"
	"strings"
)

// BaseImages are the images a Dockerfile starts its stages from (FROM)
// and copies from (COPY --from, RUN --mount=from), in order and once
// each, leaving out its own stages' names and numbers and "scratch".
// References are resolved with the global ARG defaults (the ARGs before
// the first FROM): Shoal passes no build arguments, so those defaults
// are what the build itself uses (a name without one is empty, and the
// reference then fails to pull as the build would fail on it).
//
// The agent pulls these through the job's own registry logins before it
// builds: the nodes of a host share one image store, and a build left to
// find a base image there would build on a private image another
// workspace pulled with a login this job does not have.
func BaseImages(dockerfile []byte) []string {
	args := map[string]string{}
	stages := map[string]bool{}
	seen := map[string]bool{}
	var refs []string
	add := func(ref string) {
		ref = expandArgs(ref, args)
		if ref == "" || strings.EqualFold(ref, "scratch") || stages[strings.ToLower(ref)] || isNumber(ref) || seen[ref] {
			return
		}
		seen[ref] = true
		refs = append(refs, ref)
	}
	beforeFirstFrom := true
	for _, line := range logicalLines(dockerfile) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			if !beforeFirstFrom {
				continue
			}
			for _, a := range fields[1:] {
				if k, v, ok := strings.Cut(a, "="); ok {
					args[k] = strings.Trim(v, `"'`)
				}
			}
		case "FROM":
			beforeFirstFrom = false
			rest := flagsOff(fields[1:])
			if len(rest) == 0 {
				continue
			}
			add(rest[0])
			if len(rest) >= 3 && strings.EqualFold(rest[1], "AS") {
				stages[strings.ToLower(rest[2])] = true
			}
		case "COPY", "ADD":
			for _, f := range fields[1:] {
				if v, ok := strings.CutPrefix(f, "--from="); ok {
					add(v)
				}
			}
		case "RUN":
			for _, f := range fields[1:] {
				if v, ok := strings.CutPrefix(f, "--mount="); ok {
					for _, kv := range strings.Split(v, ",") {
						if from, ok := strings.CutPrefix(kv, "from="); ok {
							add(from)
						}
					}
				}
			}
		}
	}
	return refs
}

// logicalLines joins a Dockerfile's continued lines (a trailing
// backslash) and drops its comments.
func logicalLines(b []byte) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// flagsOff drops an instruction's leading --flags (FROM --platform=…).
func flagsOff(fields []string) []string {
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		fields = fields[1:]
	}
	return fields
}

// expandArgs replaces $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word}
// as the build does: a name without a value is empty.
func expandArgs(s string, args map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		name, end := "", i+1
		if end < len(s) && s[end] == '{' {
			close := strings.IndexByte(s[end:], '}')
			if close < 0 {
				b.WriteString(s[i:])
				break
			}
			name, end = s[end+1:end+close], end+close+1
		} else {
			for end < len(s) && (s[end] == '_' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' || s[end] >= '0' && s[end] <= '9') {
				end++
			}
			name = s[i+1 : end]
		}
		b.WriteString(argValue(name, args))
		i = end - 1
	}
	return b.String()
}

// isNumber reports whether s is a stage's index (COPY --from=0).
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// argValue is what ${expr} expands to with args.
func argValue(expr string, args map[string]string) string {
	if name, word, ok := strings.Cut(expr, ":-"); ok {
		if v := args[name]; v != "" {
			return v
		}
		return word
	}
	if name, word, ok := strings.Cut(expr, ":+"); ok {
		if args[name] != "" {
			return word
		}
		return ""
	}
	return args[expr]
}

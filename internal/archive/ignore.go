package archive

import (
	"path"
	"strings"
)

// Ignore file names, in order of preference: in a directory that holds an
// .amlignore, the .gitignore next to it is not read (Azure ML's rule).
const (
	amlIgnoreName = ".amlignore"
	gitIgnoreName = ".gitignore"
)

// ignoreRule is one pattern line of a .gitignore-style file.
type ignoreRule struct {
	base    []string // directory of the ignore file, relative to the packed root
	segs    []string // pattern split on "/"; a "**" segment matches any number of path segments
	negate  bool     // "!pattern": re-include
	dirOnly bool     // "pattern/": matches directories only
}

// ignorer holds the rules of every ignore file read so far, shallowest first,
// each file's lines in order: as in git, the last matching rule decides, so
// rules of a deeper file override those of its parents.
type ignorer struct {
	rules []ignoreRule
}

// add parses the content of an ignore file found in directory base (slash
// separated, relative to the root, "" for the root itself).
func (m *ignorer) add(base, content string) {
	var baseSegs []string
	if base != "" && base != "." {
		baseSegs = strings.Split(base, "/")
	}
	for _, line := range strings.Split(content, "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			r.base = baseSegs
			m.rules = append(m.rules, r)
		}
	}
}

// parseIgnoreLine implements gitignore's line syntax: blank lines and "#"
// comments are skipped, trailing spaces are dropped unless escaped, "!"
// negates, "\!" and "\#" escape a literal first character, a trailing "/"
// matches directories only, a slash at the start or in the middle anchors the
// pattern to the ignore file's directory, and a pattern without such a slash
// matches a name at any depth.
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	switch {
	case line[0] == '!':
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	if !anchored {
		r.segs = append(r.segs, "**")
	}
	for _, s := range strings.Split(line, "/") {
		switch {
		case s == "":
			continue // "a//b" is "a/b"
		case s == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1] == "**":
			continue // "**/**" is "**"
		case strings.Contains(s, "[!"):
			s = strings.ReplaceAll(s, "[!", "[^") // git's bracket negation, in path.Match syntax
		}
		r.segs = append(r.segs, s)
	}
	if len(r.segs) == 0 {
		return ignoreRule{}, false
	}
	return r, true
}

// excluded reports whether rel (slash separated, relative to the root) is
// ignored. As in git, a path inside an excluded directory is excluded and no
// negation can re-include it.
func (m *ignorer) excluded(rel string, isDir bool) bool {
	if m == nil || len(m.rules) == 0 {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if m.matches(parts[:i], true) {
			return true
		}
	}
	return m.matches(parts, isDir)
}

// matches applies the rules to the path itself (not its parents): the last
// rule that matches decides.
func (m *ignorer) matches(parts []string, isDir bool) bool {
	excluded := false
	for _, r := range m.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if len(parts) <= len(r.base) || !hasPrefix(parts, r.base) {
			continue
		}
		if matchSegs(r.segs, parts[len(r.base):]) {
			excluded = !r.negate
		}
	}
	return excluded
}

func hasPrefix(parts, prefix []string) bool {
	for i, p := range prefix {
		if parts[i] != p {
			return false
		}
	}
	return true
}

// matchSegs matches pattern segments against path segments: "**" matches
// zero or more segments, except that a trailing "**" needs at least one
// ("dir/**" matches what is inside dir, not dir itself); other segments are
// path.Match globs ("*", "?", "[...]", "\" escapes), which never cross "/".
func matchSegs(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(parts) > 0
			}
			for i := 0; i < len(parts); i++ {
				if matchSegs(rest, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], parts[0]); err != nil || !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}

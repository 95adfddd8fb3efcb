package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The docs cannot rot: every relative link and #anchor in the repository's
// Markdown resolves, and every `shoal …` command line shown in a shell
// code block parses with the CLI's own command tree and flags.

// repoRoot is the module root as seen from this package's directory.
const repoRoot = ".."

// skippedDirs are folders whose Markdown is not the project's docs (test
// inputs, other projects' files, build outputs, nested worktrees).
var skippedDirs = map[string]bool{".git": true, "vendor": true, "testdata": true, "node_modules": true, "worktrees": true, "artifacts": true}

// markdownFiles lists every Markdown file of the repository, relative to
// root, in walk order.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skippedDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Markdown files under %s", root)
	}
	return files
}

// mdLine is one line of a Markdown file outside or inside a fenced code
// block.
type mdLine struct {
	n    int    // 1-based line number
	text string // the line
	// lang is the fence's info word for a line inside a code block ("sh",
	// "yaml", "" for a bare fence); inCode says the line is in one.
	lang   string
	inCode bool
}

// parseMarkdown splits a file into lines, marking those in fenced blocks.
func parseMarkdown(text string) []mdLine {
	var out []mdLine
	var fence, lang string
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(l, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			lang, _, _ = strings.Cut(strings.TrimSpace(trimmed[3:]), " ")
			continue
		}
		if fence != "" && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.Trim(trimmed, fence[:1])) == "" {
			fence, lang = "", ""
			continue
		}
		out = append(out, mdLine{n: i + 1, text: l, lang: lang, inCode: fence != ""})
	}
	return out
}

// codeSpan matches inline code, whose brackets are not links.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// linkTarget matches the target of an inline link or image: ](target) or
// ](target "title"). The text may span lines; the "](" may not.
var linkTarget = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)

// htmlAnchor matches an explicit anchor: <a id="x"> or <a name="x">.
var htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// anchors returns the anchors a Markdown file defines: its headings'
// slugs by GitHub's rules (with -1, -2 for repeats) and explicit ones.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range parseMarkdown(text) {
		if l.inCode {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		trimmed := strings.TrimLeft(l.text, " ")
		level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		if level < 1 || level > 6 || !strings.HasPrefix(trimmed[level:], " ") {
			continue
		}
		slug := githubSlug(trimmed[level:])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// markdownLink turns [text](url) into text, for a heading's slug.
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// githubSlug is GitHub's anchor for a heading: the rendered text lower-
// cased, every character but letters, marks, digits, connector
// punctuation (_), spaces and hyphens removed, spaces made hyphens.
func githubSlug(heading string) string {
	h := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(heading), "#"))
	h = markdownLink.ReplaceAllString(h, "$1")
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestGitHubSlug(t *testing.T) {
	for in, want := range map[string]string{
		" Set-up: two commands":                      "set-up-two-commands",
		" A location's container mode":               "a-locations-container-mode",
		" `tier_fallback` and *quotas*":              "tier_fallback-and-quotas",
		" Using Azure's SDKs with Shoal":             "using-azures-sdks-with-shoal",
		" Instances in a [virtual network](x.md) ##": "instances-in-a-virtual-network",
		" HTTPS / TLS":                               "https--tls",
	} {
		if got := githubSlug(in); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDocsLinks checks every relative link and anchor of every Markdown
// file in the repository.
func TestDocsLinks(t *testing.T) {
	root := repoRoot
	files := markdownFiles(t, root)
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(b))
		return cache[path], nil
	}
	links := 0
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range parseMarkdown(string(b)) {
			if l.inCode {
				continue
			}
			for _, m := range linkTarget.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
				target := m[1]
				if target == "" || regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target) {
					continue // an absolute URL: not checked offline
				}
				links++
				where := fmt.Sprintf("%s:%d: link %q", rel, l.n, target)
				if strings.HasPrefix(target, "/") {
					t.Errorf("%s: absolute paths do not resolve on GitHub; use a path relative to the file", where)
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := filepath.Join(root, rel)
				if path != "" {
					dest = filepath.Join(filepath.Dir(filepath.Join(root, rel)), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: %s does not exist", where, filepath.Clean(path))
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: an anchor into a file that is not Markdown", where)
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if !a[anchor] {
					t.Errorf("%s: no heading or anchor #%s there", where, anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found: the walk is broken")
	}
}

// shellLangs are the code blocks whose lines are commands.
var shellLangs = map[string]bool{"sh": true, "bash": true, "console": true, "shell": true}

// docCommand is one command line of a shell code block, continuations
// joined.
type docCommand struct {
	n       int // the line it starts on
	text    string
	console bool // from a console block: only prompted lines are commands
}

// heredocStart matches the start of a here-document: <<EOF, <<'EOF', <<-"EOF".
var heredocStart = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// shellCommands returns the command lines of a file's shell code blocks,
// without here-documents' bodies.
func shellCommands(lines []mdLine) []docCommand {
	var out []docCommand
	var cur *docCommand
	heredoc := ""
	for _, l := range lines {
		if !l.inCode || !shellLangs[l.lang] {
			cur, heredoc = nil, ""
			continue
		}
		if heredoc != "" {
			if strings.TrimSpace(l.text) == heredoc {
				heredoc = ""
			}
			continue
		}
		if cur != nil {
			cur.text += " " + strings.TrimSpace(l.text)
		} else {
			out = append(out, docCommand{n: l.n, text: l.text, console: l.lang == "console"})
			cur = &out[len(out)-1]
		}
		if m := heredocStart.FindStringSubmatch(l.text); m != nil {
			heredoc = m[1]
		}
		if strings.HasSuffix(strings.TrimRight(l.text, " "), `\`) {
			cur.text = strings.TrimSuffix(strings.TrimRight(cur.text, " "), `\`)
			continue
		}
		cur = nil
	}
	return out
}

// prompt matches a shell prompt before a command: "$ ", "ctl1$ ", "# ".
var prompt = regexp.MustCompile(`^\s*[\w.@:~/-]*\$ `)

// shellWords splits a command line into words and operators the way a
// shell would for this purpose: quotes group, a word starting with # is a
// comment, $(...) is one word, and |, ||, &&, ;, & and redirections are
// operators. A <placeholder> is a word.
func shellWords(line string) []string {
	var words []string
	var b strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, b.String())
		}
		b.Reset()
		inWord = false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'' || r == '"':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != r {
				if r == '"' && rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				b.WriteRune(rs[j])
				j++
			}
			i = j
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			inWord = true
			depth := 0
			for ; i < len(rs); i++ {
				b.WriteRune(rs[i])
				if rs[i] == '(' {
					depth++
				} else if rs[i] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
		case r == '\\' && i+1 < len(rs):
			inWord = true
			i++
			b.WriteRune(rs[i])
		case unicode.IsSpace(r):
			flush()
		case r == '#' && !inWord:
			flush()
			return words
		case r == '<' && !inWord && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && strings.ContainsRune(string(rs[i:]), '>'):
			// a <placeholder>, up to its >
			inWord = true
			for ; i < len(rs) && rs[i] != '>'; i++ {
				b.WriteRune(rs[i])
			}
			b.WriteRune('>')
		case strings.ContainsRune("|&;<>", r):
			flush()
			op := string(r)
			for i+1 < len(rs) && strings.ContainsRune("|&<>", rs[i+1]) {
				i++
				op += string(rs[i])
			}
			words = append(words, op)
		default:
			inWord = true
			b.WriteRune(r)
		}
	}
	flush()
	return words
}

// shoalInvocations returns the argument lists of every `shoal` (or
// `go run ./cmd/shoal`) invocation in a command line, including those in
// $(...) substitutions.
func shoalInvocations(line string) [][]string {
	var out [][]string
	words := shellWords(line)
	for _, w := range words {
		for _, sub := range regexp.MustCompile(`\$\((.*)\)`).FindAllStringSubmatch(w, -1) {
			out = append(out, shoalInvocations(sub[1])...)
		}
	}
	var seg []string
	end := func() {
		for len(seg) > 0 && (regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(seg[0]) || seg[0] == "sudo" || seg[0] == "exec") {
			seg = seg[1:]
		}
		switch {
		case len(seg) > 0 && (seg[0] == "shoal" || strings.HasSuffix(seg[0], "/shoal")):
			out = append(out, seg[1:])
		case len(seg) > 2 && seg[0] == "go" && seg[1] == "run" && (seg[2] == "./cmd/shoal" || seg[2] == "./cmd/shoal-server"):
			out = append(out, seg[3:])
		}
		seg = nil
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "":
			seg = append(seg, w)
		case w == "|" || w == "||" || w == "&&" || w == ";" || w == "&":
			end()
		case strings.ContainsAny(w[:1], "<>") && strings.Trim(w, "<>&|0123456789") == "":
			i++ // a redirection and its file
		case regexp.MustCompile(`^[0-9]+$`).MatchString(w) && i+1 < len(words) && strings.ContainsAny(words[i+1][:1], "<>"):
			// 2>file: the fd number before a redirection
		default:
			seg = append(seg, w)
		}
	}
	end()
	return out
}

// checkShoalArgs parses args with a fresh command tree: the command must
// exist and its flags must parse, as they would when the command ran.
func checkShoalArgs(args []string) error {
	var out bytes.Buffer
	root := NewCommand(&out, &out, testSide)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	positional := cmd.Flags().Args()
	if cmd.HasSubCommands() && !cmd.Runnable() {
		if len(positional) > 0 {
			return fmt.Errorf("unknown command %q for %q", positional[0], cmd.CommandPath())
		}
		return nil
	}
	if err := cmd.ValidateArgs(positional); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// TestDocsCommands runs every `shoal …` line of every shell code block in
// the repository's Markdown through the CLI's command tree and flag parser.
func TestDocsCommands(t *testing.T) {
	checked := 0
	for _, rel := range markdownFiles(t, repoRoot) {
		b, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range shellCommands(parseMarkdown(string(b))) {
			text := c.text
			if loc := prompt.FindStringIndex(text); loc != nil {
				text = text[loc[1]:]
			} else if c.console {
				continue // output, not a command
			}
			for _, args := range shoalInvocations(text) {
				checked++
				if err := checkShoalArgs(args); err != nil {
					t.Errorf("%s:%d: shoal %s: %v", rel, c.n, strings.Join(args, " "), err)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d shoal command lines found: the parser is broken", checked)
	}
}

func TestShoalInvocations(t *testing.T) {
	for line, want := range map[string]string{
		`shoal compute list -o table   # a comment`:                                   "[[compute list -o table]]",
		`SHOAL_TOKEN=$ALICE shoal compute list`:                                       "[[compute list]]",
		`ALICE=$(shoal token create --user alice --query token -o tsv)`:               "[[token create --user alice --query token -o tsv]]",
		`shoal job download -n <name> > out.txt 2>&1 && cat out.txt`:                  "[[job download -n <name>]]",
		`curl -H "x" "$(shoal compute show -n a --query 'b | [0]' -o tsv)api" | jq .`: "[[compute show -n a --query b | [0] -o tsv]]",
		`go run ./cmd/shoal server --config "my file.yml" &`:                          "[[server --config my file.yml]]",
		`squeue --name shoal-hpc-cluster-n1`:                                          "[]",
	} {
		if got := fmt.Sprint(shoalInvocations(line)); got != want {
			t.Errorf("shoalInvocations(%q) = %s, want %s", line, got, want)
		}
	}
	if err := checkShoalArgs([]string{"compute", "frobnicate"}); err == nil {
		t.Error("an unknown subcommand passed")
	}
	if err := checkShoalArgs([]string{"compute", "list", "--no-such-flag"}); err == nil {
		t.Error("an unknown flag passed")
	}
	if err := checkShoalArgs([]string{"frobnicate"}); err == nil {
		t.Error("an unknown command passed")
	}
	if err := checkShoalArgs([]string{"-w", "ws", "compute", "show", "-n", "<name>", "--query", "state"}); err != nil {
		t.Errorf("a valid line failed: %v", err)
	}
}

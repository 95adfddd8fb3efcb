// Package deptest holds the module's dependency rules as tests: the
// domain's core links only the standard library, the kinds import the
// core and each other in one direction, the agent and the client link no
// server package, the pure decisions reach no store, provider or service,
// and request handling and control loops never import each other.
package deptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Module is this repository's module path; the rules name packages
// relative to it.
const Module = "github.com/shoal-ml/shoal"

// Graph is the module's import graph (standard library included) as `go
// list -deps` prints it: each package's direct imports.
type Graph map[string][]string

// ImportGraph lists every package of the module with its imports. It
// reads the build's own view (build tags, the module's go.mod) rather
// than parsing files, so that what it checks is what gets linked.
func ImportGraph(t testing.TB) Graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", Module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := Graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g[f[0]] = f[1:]
	}
	if len(g.Match("...")) < 10 {
		t.Fatalf("go list found too few of the module's packages: %q", out)
	}
	return g
}

// Relative returns a module package's path below the module; ok is false
// for packages outside the module (the standard library, dependencies).
func (g Graph) Relative(pkg string) (rel string, ok bool) {
	return strings.CutPrefix(pkg, Module+"/")
}

// matches reports whether a module-relative path matches pattern:
// "agent/..." is agent and its sub-packages, "service" is that package
// alone, "..." is every package.
func matches(rel, pattern string) bool {
	base, tree := strings.CutSuffix(pattern, "...")
	base = strings.TrimSuffix(base, "/")
	return rel == base || (tree && (base == "" || strings.HasPrefix(rel, base+"/")))
}

// Match returns the module's packages matching pattern, sorted.
func (g Graph) Match(pattern string) []string {
	var out []string
	for pkg := range g {
		if rel, ok := g.Relative(pkg); ok && matches(rel, pattern) {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// Deps returns every package root links, sorted.
func (g Graph) Deps(root string) []string {
	seen := map[string]bool{}
	stack := []string{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range g[p] {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, d)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// path returns the chain of imports from root to target, nil if none.
func (g Graph) path(root, target string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, d := range g[p] {
			if _, ok := prev[d]; !ok {
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return nil
}

// Chain shows the imports from root to target with the module's prefix
// left out: "agent → api → service".
func (g Graph) Chain(root, target string) string {
	var rels []string
	for _, p := range g.path(root, target) {
		rel, ok := g.Relative(p)
		if !ok {
			rel = p
		}
		rels = append(rels, rel)
	}
	return strings.Join(rels, " → ")
}

// ForbidLinks fails for every package of roots that links a package
// matching one of the forbidden patterns, showing the chain of imports
// that brings it in.
func ForbidLinks(t testing.TB, g Graph, roots, forbidden []string) {
	t.Helper()
	if len(roots) == 0 {
		t.Fatal("the rule matches no package")
	}
	for _, root := range roots {
		for _, dep := range g.Deps(root) {
			rel, ok := g.Relative(dep)
			if !ok {
				continue
			}
			for _, f := range forbidden {
				if matches(rel, f) {
					t.Errorf("%s links %s: %s", root, dep, g.Chain(root, dep))
				}
			}
		}
	}
}

package shoal_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this repository's module path; the rules below name packages
// relative to it.
const module = "github.com/shoal-ml/shoal"

// serverPackages are the packages only the server links: request
// handling, control loops, stores and providers. A package named here
// forbids its sub-packages too.
var serverPackages = []string{
	"access", "api", "app", "arm", "autoscaler", "cli", "cmd", "components", "computes", "config", "control", "cost", "environments", "filestore", "leader",
	"metrics", "oidcauth", "postgres", "provider", "quota", "registries", "scheduler", "service", "sim",
	"sqlite", "sqlstore", "storetest", "studio", "tracking", "versioned",
}

// TestAgentLinksNoServerPackage: the node agent runs on machines that are
// not the server's; it talks to the server through client/ only, so a
// change to the server's insides never rebuilds (or bloats) the agent.
func TestAgentLinksNoServerPackage(t *testing.T) {
	g := importGraph(t)
	forbidLinks(t, g, g.match("agent/..."), serverPackages)
}

// TestClientLinksOnlyTheDomain: the Go client links the root package, the
// standard library and the small helpers named here, nothing of the
// server, so that the agent, the CLI and other programs can link it alone.
func TestClientLinksOnlyTheDomain(t *testing.T) {
	g := importGraph(t)
	roots := g.match("client/...")
	forbidLinks(t, g, roots, serverPackages)
	allowed := []string{"", "client", "tlsconf"}
	for _, root := range roots {
		for _, dep := range g.deps(root) {
			if rel, ok := g.relative(dep); ok && !slices.Contains(allowed, rel) && !strings.HasPrefix(rel, "client/") {
				t.Errorf("%s links %s (%s): the client may link only the root package, the standard library and %v", root, dep, g.chain(root, dep), allowed[2:])
			}
		}
	}
}

// TestPureCoresImportNoStoreProviderOrService: the scheduler, the
// autoscaler, the instance state machine and the job state machine
// (jobrun) decide over a snapshot and a
// time given to them; reaching a store, a provider or the services from
// there would hide I/O inside a decision.
func TestPureCoresImportNoStoreProviderOrService(t *testing.T) {
	g := importGraph(t)
	var roots []string
	for _, p := range []string{"scheduler/...", "autoscaler/...", "instance/...", "jobrun/..."} {
		roots = append(roots, g.match(p)...)
	}
	forbidLinks(t, g, roots, []string{
		"api", "app", "arm", "control", "cost", "filestore", "leader", "postgres", "provider", "quota", "service",
		"sim", "sqlite", "sqlstore", "storetest", "studio", "tracking", "versioned",
	})
}

// TestRequestServicesLinkNoServiceOrStore: the request services per
// resource (access/, computes/, quota/, cost/, environments/,
// components/, and service's own rooms: service/agentapi/, the agent
// protocol; service/storage/, the storage quota's writes;
// service/workspaces/) reach the store through shoal.Store and one
// another through interfaces they declare, so service links them and
// never the reverse, and a request room stays testable over any store
// without the rest of the server.
// ("service" forbids service's rooms too: agentapi reaches storage
// through its Storage interface, not by linking it.)
func TestRequestServicesLinkNoServiceOrStore(t *testing.T) {
	g := importGraph(t)
	var roots []string
	for _, p := range []string{"access/...", "computes/...", "quota/...", "cost/...", "environments/...", "components/...", "registries/...", "tracking/...", "service/agentapi/...", "service/storage/...", "service/workspaces/...", "versioned/..."} {
		roots = append(roots, g.match(p)...)
	}
	forbidLinks(t, g, roots, []string{
		"api", "app", "arm", "control", "filestore", "leader", "postgres", "provider", "service",
		"sim", "sqlite", "sqlstore", "storetest", "studio", "tracking", "versioned",
	})
}

// TestServiceLinksNoControlLoop: the control loops (control/) call the
// request services through an interface they declare, so the dependency
// points one way: control links service, never the reverse. A request
// handler that needed a loop would hide a second policy (a hand-on that
// placed differently from a pass) where the loops cannot see it.
func TestServiceLinksNoControlLoop(t *testing.T) {
	g := importGraph(t)
	forbidLinks(t, g, g.match("service/..."), []string{"control"})
}

// graph is the module's import graph (standard library included) as `go
// list -deps` prints it: each package's direct imports.
type graph map[string][]string

// importGraph lists every package of the module with its imports. It
// reads the build's own view (build tags, the module's go.mod) rather
// than parsing files, so that what it checks is what gets linked.
func importGraph(t *testing.T) graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g[f[0]] = f[1:]
	}
	if len(g.match("...")) < 10 {
		t.Fatalf("go list found too few of the module's packages: %q", out)
	}
	return g
}

// relative returns a module package's path below the module ("" for the
// root package); ok is false for packages outside the module.
func (g graph) relative(pkg string) (rel string, ok bool) {
	if pkg == module {
		return "", true
	}
	rel, ok = strings.CutPrefix(pkg, module+"/")
	return rel, ok
}

// match returns the module's packages matching pattern ("agent/..." is
// agent and its sub-packages, "..." is all of them), sorted.
func (g graph) match(pattern string) []string {
	base, tree := strings.CutSuffix(pattern, "...")
	base = strings.TrimSuffix(base, "/")
	var out []string
	for pkg := range g {
		rel, ok := g.relative(pkg)
		if !ok {
			continue
		}
		if rel == base || (tree && (base == "" || strings.HasPrefix(rel, base+"/"))) {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// deps returns every package root links, sorted.
func (g graph) deps(root string) []string {
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
func (g graph) path(root, target string) []string {
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

// chain shows the imports from root to target with the module's prefix
// left out: "agent → api → service".
func (g graph) chain(root, target string) string {
	var rels []string
	for _, p := range g.path(root, target) {
		rel, ok := g.relative(p)
		if !ok || rel == "" {
			rel = p
		}
		rels = append(rels, rel)
	}
	return strings.Join(rels, " → ")
}

// forbidLinks fails for every package of roots that links a package
// named in forbidden (or below one), showing the chain of imports that
// brings it in.
func forbidLinks(t *testing.T, g graph, roots, forbidden []string) {
	t.Helper()
	if len(roots) == 0 {
		t.Fatal("the rule matches no package")
	}
	for _, root := range roots {
		for _, dep := range g.deps(root) {
			rel, ok := g.relative(dep)
			if !ok {
				continue
			}
			for _, f := range forbidden {
				if rel == f || strings.HasPrefix(rel, f+"/") {
					t.Errorf("%s links %s: %s", root, dep, g.chain(root, dep))
				}
			}
		}
	}
}

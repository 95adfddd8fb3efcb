package deptest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/deptest"
)

// serverPackages are the packages only the server links: request
// handling, control loops, stores and providers.
var serverPackages = []string{
	"api/...", "arm/...", "cli/...", "cmd/...", "control/...", "decide/scheduler/...", "decide/autoscaler/...",
	"provider/...", "server/...", "service/...", "sim/...", "store/...", "studio/...",
}

// TestAgentLinksNoServerPackage: the node agent runs on machines that are
// not the server's; it talks to the server through client/ only, so a
// change to the server's insides never rebuilds (or bloats) the agent.
func TestAgentLinksNoServerPackage(t *testing.T) {
	g := deptest.ImportGraph(t)
	deptest.ForbidLinks(t, g, g.Match("agent/..."), serverPackages)
}

// TestClientLinksOnlyTheDomain: the Go client links the domain, the
// standard library and the small helpers named here, nothing of the
// server, so that the agent, the CLI and other programs can link it alone.
func TestClientLinksOnlyTheDomain(t *testing.T) {
	g := deptest.ImportGraph(t)
	roots := g.Match("client/...")
	deptest.ForbidLinks(t, g, roots, serverPackages)
	for _, root := range roots {
		for _, dep := range g.Deps(root) {
			rel, ok := g.Relative(dep)
			if !ok || strings.HasPrefix(rel, "domain/") || strings.HasPrefix(rel, "client/") || rel == "client" || rel == "internal/tlsconf" {
				continue
			}
			t.Errorf("%s links %s (%s): the client may link only the domain, the standard library and internal/tlsconf", root, dep, g.Chain(root, dep))
		}
	}
}

// TestCLILinksNoServerSidePackage: the CLI binary (cmd/shoal) starts a
// process per command, and every package it links runs its init first
// (client-go's scheme, the SQLite driver, prometheus: ~10 ms of a 14 ms
// `shoal version`); the server, the agent, the providers and the store
// live in the full binary (cmd/shoal-server), which the CLI execs.
func TestCLILinksNoServerSidePackage(t *testing.T) {
	g := deptest.ImportGraph(t)
	roots := g.Match("cmd/shoal")
	if len(roots) != 1 {
		t.Fatalf("cmd/shoal matches %q", roots)
	}
	deptest.ForbidLinks(t, g, roots, []string{
		"agent/...", "api/...", "arm/...", "control/...", "provider/...", "server/...", "service/...", "sim/...", "store/...", "studio/...",
		"cli/full", "cli/server", "cli/agentcmd", "cli/admin", "cli/simcmd",
	})
	forbidden := []string{"k8s.io/", "sigs.k8s.io/", "github.com/aws/", "github.com/Azure/", "github.com/prometheus/", "modernc.org/", "github.com/jackc/"}
	for _, dep := range g.Deps(roots[0]) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("cmd/shoal links %s (%s): the CLI links no server-side library", dep, g.Chain(roots[0], dep))
			}
		}
	}
}

// TestServerLinksOneKubernetesAPIGroup: the Kubernetes provider calls
// the core/v1 API alone, through a client whose scheme holds that group
// (provider/kubernetes/coreclient.go). client-go's typed clients and
// their scheme register all 57 API groups at every server's start, used
// or not: about 5 MB of an idle server's memory and a quarter of its binary.
func TestServerLinksOneKubernetesAPIGroup(t *testing.T) {
	g := deptest.ImportGraph(t)
	roots := g.Match("cmd/shoal-server")
	if len(roots) != 1 {
		t.Fatalf("cmd/shoal-server matches %q", roots)
	}
	for _, dep := range g.Deps(roots[0]) {
		if strings.HasPrefix(dep, "k8s.io/client-go/kubernetes") ||
			strings.HasPrefix(dep, "k8s.io/api/") && !strings.HasPrefix(dep, "k8s.io/api/core/") {
			t.Errorf("cmd/shoal-server links %s (%s): the server links the core/v1 API group of Kubernetes alone", dep, g.Chain(roots[0], dep))
		}
	}
}

// TestPureDecisionsImportNoStoreProviderOrService: the scheduler, the
// autoscaler, the instance state machine, the job state machine (jobrun)
// and the sweep's sampling decide over a snapshot and a time given to
// them; reaching a store, a provider or the services from there would
// hide I/O inside a decision.
func TestPureDecisionsImportNoStoreProviderOrService(t *testing.T) {
	g := deptest.ImportGraph(t)
	deptest.ForbidLinks(t, g, g.Match("decide/..."), []string{
		"api/...", "arm/...", "control/...", "provider/...", "server/...", "service/...", "sim/...", "studio/...",
		"store/sqlstore/...", "store/sqlite/...", "store/postgres/...", "store/storetest/...", "store/filestore/...", "store/live/...",
	})
}

// TestRequestServicesLinkNoServiceOrStore: the request services per
// resource (service/access, service/computes, ...) reach the store through
// the store.Store interface and one another through interfaces they
// declare, so the service package links them and never the reverse, and a
// request room stays testable over any store without the rest of the
// server.
func TestRequestServicesLinkNoServiceOrStore(t *testing.T) {
	g := deptest.ImportGraph(t)
	var roots []string
	for _, p := range g.Match("service/...") {
		if rel, _ := g.Relative(p); rel != "service" {
			roots = append(roots, p)
		}
	}
	deptest.ForbidLinks(t, g, roots, []string{
		"service", "api/...", "arm/...", "control/...", "provider/...", "server/app/...", "sim/...", "studio/...",
		"store/sqlstore/...", "store/sqlite/...", "store/postgres/...", "store/storetest/...", "store/filestore/...",
	})
}

// TestServiceLinksNoControlLoop: the control loops (control/) call the
// request services through an interface they declare, so the dependency
// points one way: control links service, never the reverse. A request
// handler that needed a loop would hide a second policy (a hand-on that
// placed differently from a pass) where the loops cannot see it.
func TestServiceLinksNoControlLoop(t *testing.T) {
	g := deptest.ImportGraph(t)
	deptest.ForbidLinks(t, g, g.Match("service/..."), []string{"control/..."})
}

// kinds is the domain's order: a kind may import those listed for it and
// nothing else of the module, so that dependencies between kinds point
// one way (a job names its compute, a compute never its jobs; a
// pipeline's step may be a sweep, a sweep never holds a pipeline).
var kinds = map[string][]string{
	"domain/core":            {},
	"domain/mlflowrun":       {"domain/core"},
	"domain/format":          {},
	"domain/schedule":        {"domain/core"},
	"domain/notify":          {"domain/core"},
	"domain/identity":        {"domain/core"},
	"domain/asset":           {"domain/core"},
	"domain/catalog":         {"domain/core"},
	"domain/compute":         {"domain/core", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog"},
	"domain/job/jobio":       {"domain/core", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute"},
	"domain/job/jobdecode":   {"domain/core", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job/jobio"},
	"domain/job/interactive": {"domain/core", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job/jobio", "domain/job/jobdecode"},
	"domain/job":             {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/job/serverless":  {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive", "domain/job"},
	"domain/job/pipelinejob": {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive", "domain/job/sweepjob", "domain/job/paralleljob"},
	"domain/job/paralleljob": {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/parallel":        {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/job/jobdoc":      {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/job/sweepjob":    {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/node":            {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
	"domain/money":           {"domain/core", "domain/identity"},
	"domain/blobs":           {"domain/core"},
	"domain/batch":           {"domain/core", "domain/notify", "domain/schedule", "domain/identity", "domain/asset", "domain/catalog", "domain/compute", "domain/job", "domain/job/jobio", "domain/job/jobdecode", "domain/job/interactive"},
}

// TestDomainKindsImportInOneDirection: the core links only the standard
// library; every kind links the standard library and the kinds below it;
// no kind links a third-party module, an adapter or the store.
func TestDomainKindsImportInOneDirection(t *testing.T) {
	g := deptest.ImportGraph(t)
	roots := g.Match("domain/...")
	seen := 0
	for _, root := range roots {
		rel, _ := g.Relative(root)
		if strings.HasSuffix(rel, "test") {
			continue // test helpers (coretest) link testing
		}
		allowed, ok := kinds[rel]
		if !ok {
			t.Errorf("%s is a domain package the rules do not know: add it to kinds with what it may import", rel)
			continue
		}
		seen++
		for _, dep := range g.Deps(root) {
			drel, inModule := g.Relative(dep)
			if !inModule {
				first, _, _ := strings.Cut(dep, "/")
				if strings.Contains(first, ".") {
					t.Errorf("%s links %s (%s): the domain may link only the standard library", rel, dep, g.Chain(root, dep))
				}
				continue
			}
			if !slices.Contains(allowed, drel) {
				t.Errorf("%s links %s (%s): it may import only %v", rel, drel, g.Chain(root, dep), allowed)
			}
		}
	}
	if seen != len(kinds) {
		t.Errorf("found %d of the %d kinds", seen, len(kinds))
	}
}

// TestStoreInterfaceLinksOnlyTheDomain: the Store interface names every
// kind and nothing else, so that the stores, the services and the control
// loops share one contract without linking each other.
func TestStoreInterfaceLinksOnlyTheDomain(t *testing.T) {
	g := deptest.ImportGraph(t)
	for _, dep := range g.Deps(deptest.Module + "/store") {
		rel, ok := g.Relative(dep)
		if ok && !strings.HasPrefix(rel, "domain/") {
			t.Errorf("store links %s (%s)", rel, g.Chain(deptest.Module+"/store", dep))
		}
		if !ok {
			if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") {
				t.Errorf("store links %s", dep)
			}
		}
	}
}

// TestARMTranslationLinksOnlyTheDomain: arm's sub-packages (armcore,
// armjob, armbatch, armschedule, armcompute, armasset) are pure
// translation between Azure's resources and Shoal's documents; the
// routes, and so the services and the store, are package arm's. A
// translation that reached a service would hide a request's I/O where
// its tests (bodies in, documents out) cannot see it.
func TestARMTranslationLinksOnlyTheDomain(t *testing.T) {
	g := deptest.ImportGraph(t)
	seen := 0
	for _, root := range g.Match("arm/...") {
		if rel, _ := g.Relative(root); rel == "arm" {
			continue
		}
		seen++
		for _, dep := range g.Deps(root) {
			rel, ok := g.Relative(dep)
			if !ok {
				if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") {
					t.Errorf("%s links %s (%s): arm's translations link only the standard library and the domain", root, dep, g.Chain(root, dep))
				}
				continue
			}
			if !strings.HasPrefix(rel, "domain/") && !strings.HasPrefix(rel, "arm/") {
				t.Errorf("%s links %s (%s): arm's translations link only the domain and one another", root, rel, g.Chain(root, dep))
			}
		}
	}
	if seen < 6 {
		t.Errorf("found %d of arm's translation packages, want at least 6", seen)
	}
}

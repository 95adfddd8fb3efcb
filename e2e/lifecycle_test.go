package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func show(t *testing.T, s *server, name string) map[string]any {
	t.Helper()
	return runJSON[map[string]any](t, s.env, "compute", "show", "-n", name, "-o", "json")
}

func events(t *testing.T, s *server, name string) []map[string]any {
	t.Helper()
	return runJSON[[]map[string]any](t, s.env, "compute", "events", "-n", name, "-o", "json")
}

func eventKinds(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, jsonStr(e["kind"]))
	}
	return out
}

// TestCreateFileAgain applies a file again: unchanged (no-op), a mutable
// field changed (update with an event), an immutable field changed (refused).
func TestCreateFileAgain(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	file := seedFile(t, "location-example.yml")
	mustRun(t, s.env, "compute", "create", "-f", file)
	first := show(t, s, "location-example")
	evs := events(t, s, "location-example")
	if got := eventKinds(evs); !slices.Equal(got, []string{"created", "provisioned"}) {
		t.Fatalf("events after create = %v, want [created provisioned]", got)
	}

	// The same file again changes nothing, not even the ETag.
	again := runJSON[map[string]any](t, s.env, "compute", "create", "-f", file)
	if again["etag"] != first["etag"] || again["modified_on"] != first["modified_on"] {
		t.Errorf("applying the same file changed the compute: etag %v→%v, modified_on %v→%v", first["etag"], again["etag"], first["modified_on"], again["modified_on"])
	}
	// A size spelled differently (sizes are case-insensitive) is no change either.
	mustRun(t, s.env, "compute", "create", "-f", writeVariant(t, "location-example.yml", "size: STANDARD_DS3_v2", "size: Standard_DS3_v2"))
	if got := eventKinds(events(t, s, "location-example")); !slices.Equal(got, []string{"created", "provisioned"}) {
		t.Errorf("events after applying unchanged files = %v, want [created provisioned]", got)
	}

	// max_instances changed: an update.
	mustRun(t, s.env, "compute", "create", "-f", writeVariant(t, "location-example.yml", "max_instances: 2", "max_instances: 5"))
	c := show(t, s, "location-example")
	if jsonInt(c["max_instances"]) != 5 {
		t.Errorf("max_instances = %v after applying max_instances: 5", c["max_instances"])
	}
	if c["etag"] == first["etag"] {
		t.Errorf("etag did not change on update: %v", c["etag"])
	}
	if evs := events(t, s, "location-example"); !hasEvent(evs, "updated", "max_instances") {
		t.Errorf("no updated event naming max_instances: %v", evs)
	}

	// size changed: refused with exit code 1, nothing changes.
	stderr, code := mustFail(t, s.env, "compute", "create", "-f", writeVariant(t, "location-example.yml", "size: STANDARD_DS3_v2", "size: Standard_DS12_v2"))
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	for _, want := range []string{"size", "cannot change"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not mention %q: %s", want, stderr)
		}
	}
	c = show(t, s, "location-example")
	if jsonStr(c["size"]) != "STANDARD_DS3_v2" || jsonInt(c["max_instances"]) != 5 {
		t.Errorf("after the refused apply: size %v, max_instances %v; want STANDARD_DS3_v2, 5", c["size"], c["max_instances"])
	}
}

// TestUpdateCommand runs `compute update --min-instances/--max-instances`.
func TestUpdateCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	mustRun(t, s.env, "compute", "create", "--name", "upd-cluster", "--type", "AmlCompute", "--size", "Standard_DS3_v2", "--min-instances", "0", "--max-instances", "2")

	out := runJSON[map[string]any](t, s.env, "compute", "update", "--name", "upd-cluster", "--min-instances", "1", "--max-instances", "3")
	if jsonInt(out["min_instances"]) != 1 || jsonInt(out["max_instances"]) != 3 {
		t.Errorf("update printed min %v max %v, want 1 and 3", out["min_instances"], out["max_instances"])
	}
	c := show(t, s, "upd-cluster")
	if jsonInt(c["min_instances"]) != 1 || jsonInt(c["max_instances"]) != 3 || jsonStr(c["size"]) != "Standard_DS3_v2" {
		t.Errorf("show after update: min %v max %v size %v", c["min_instances"], c["max_instances"], c["size"])
	}
	evs := events(t, s, "upd-cluster")
	if !hasEvent(evs, "updated", "min_instances 0→1") || !hasEvent(evs, "updated", "max_instances 2→3") {
		t.Errorf("events do not record the update: %v", evs)
	}

	stderr, code := mustFail(t, s.env, "compute", "update", "--name", "upd-cluster", "--max-instances", "0")
	if code != 1 || !strings.Contains(stderr, "max_instances") {
		t.Errorf("update --max-instances 0: exit code %d, stderr %q; want 1 naming max_instances", code, stderr)
	}
	if c := show(t, s, "upd-cluster"); jsonInt(c["max_instances"]) != 3 {
		t.Errorf("max_instances = %v after the refused update, want 3", c["max_instances"])
	}

	stderr, _ = mustFail(t, s.env, "compute", "update", "--name", "no-such-cluster", "--max-instances", "2")
	if !strings.Contains(stderr, "not found") {
		t.Errorf("update of a missing compute: stderr %q, want not found", stderr)
	}
}

// TestDelete deletes with --yes, refuses without an answer and deletes on "y".
func TestDelete(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	for _, n := range []string{"delete-yes", "delete-prompt", "delete-keep"} {
		mustRun(t, s.env, "compute", "create", "--name", n, "--max-instances", "2")
	}

	mustRun(t, s.env, "compute", "delete", "-n", "delete-yes", "--yes")
	stderr, _ := mustFail(t, s.env, "compute", "show", "-n", "delete-yes")
	if !strings.Contains(stderr, "not found") {
		t.Errorf("show after delete: stderr %q, want not found", stderr)
	}
	// The event log of a deleted compute stays readable.
	if got := eventKinds(events(t, s, "delete-yes")); !slices.Contains(got, "deleting") || !slices.Contains(got, "deleted") {
		t.Errorf("events of the deleted compute = %v, want deleting and deleted", got)
	}

	// No --yes and no answer on stdin: refused, the compute stays.
	stderr, _ = mustFail(t, s.env, "compute", "delete", "-n", "delete-prompt")
	if !strings.Contains(stderr, "--yes") {
		t.Errorf("delete without --yes: stderr %q should point to --yes", stderr)
	}
	if c := show(t, s, "delete-prompt"); jsonStr(c["provisioning_state"]) != "Succeeded" {
		t.Errorf("after the refused delete: provisioning_state %v", c["provisioning_state"])
	}
	// "n": cancelled.
	if _, stderr, code := runStdin(t, s.env, "n\n", "compute", "delete", "-n", "delete-prompt"); code == 0 || !strings.Contains(stderr, "cancelled") {
		t.Errorf("delete answered n: exit code %d, stderr %q", code, stderr)
	}
	show(t, s, "delete-prompt")
	// "y": deleted.
	if _, stderr, code := runStdin(t, s.env, "y\n", "compute", "delete", "-n", "delete-prompt"); code != 0 {
		t.Fatalf("delete answered y: exit code %d, stderr %q", code, stderr)
	}
	if _, stderr, code := run(t, s.env, "compute", "show", "-n", "delete-prompt"); code == 0 || !strings.Contains(stderr, "not found") {
		t.Errorf("show after delete answered y: exit code %d, stderr %q", code, stderr)
	}

	names, _ := listNames(t, s.env, "default")
	if !slices.Equal(names, []string{"delete-keep"}) {
		t.Errorf("list after the deletes = %v, want [delete-keep]", names)
	}
	stderr, _ = mustFail(t, s.env, "compute", "delete", "-n", "delete-yes", "--yes")
	if !strings.Contains(stderr, "not found") {
		t.Errorf("deleting a deleted compute: stderr %q, want not found", stderr)
	}
}

// TestOutputFormats checks -o table, tsv, yaml, none and --query on list.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	mustRun(t, s.env, "compute", "create", "--name", "fmt-alpha", "--size", "Standard_DS3_v2", "--max-instances", "2")
	mustRun(t, s.env, "compute", "create", "--name", "fmt-beta", "--size", "Standard_DS12_v2", "--tier", "low_priority", "--max-instances", "3")

	t.Run("table", func(t *testing.T) {
		lines := strings.Split(strings.TrimRight(mustRun(t, s.env, "compute", "list", "-o", "table"), "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("table has %d lines, want header, dashes and 2 rows:\n%s", len(lines), strings.Join(lines, "\n"))
		}
		for _, h := range []string{"Name", "Type", "Size", "Location", "Tier", "Min Instances", "Max Instances", "Provisioning State"} {
			if !strings.Contains(lines[0], h) {
				t.Errorf("header %q lacks %q", lines[0], h)
			}
		}
		if strings.Trim(lines[1], "- ") != "" {
			t.Errorf("second line %q is not dashes", lines[1])
		}
		if f := strings.Fields(lines[2]); len(f) < 8 || f[0] != "fmt-alpha" || f[2] != "Standard_DS3_v2" || f[4] != "dedicated" || f[6] != "2" || f[7] != "Succeeded" {
			t.Errorf("row %q", lines[2])
		}
		if f := strings.Fields(lines[3]); len(f) < 8 || f[0] != "fmt-beta" || f[2] != "Standard_DS12_v2" || f[4] != "low_priority" || f[6] != "3" {
			t.Errorf("row %q", lines[3])
		}
	})
	t.Run("tsv", func(t *testing.T) {
		lines := strings.Split(strings.TrimRight(mustRun(t, s.env, "compute", "list", "-o", "tsv"), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("tsv has %d lines, want 2 (no header):\n%s", len(lines), strings.Join(lines, "\n"))
		}
		want := [][]string{
			{"fmt-alpha", "amlcompute", "Standard_DS3_v2", "local", "dedicated", "0", "2", "Succeeded"},
			{"fmt-beta", "amlcompute", "Standard_DS12_v2", "local", "low_priority", "0", "3", "Succeeded"},
		}
		for i, line := range lines {
			f := strings.Split(line, "\t")
			if len(f) < len(want[i]) || !slices.Equal(f[:len(want[i])], want[i]) {
				t.Errorf("tsv line %d = %q, want it to start with %q", i, f, want[i])
			}
		}
		if got := mustRun(t, s.env, "compute", "list", "--query", "[].name", "-o", "tsv"); got != "fmt-alpha\nfmt-beta\n" {
			t.Errorf("list --query [].name -o tsv = %q", got)
		}
		if got := mustRun(t, s.env, "compute", "show", "-n", "fmt-beta", "--query", "max_instances", "-o", "tsv"); got != "3\n" {
			t.Errorf("show --query max_instances -o tsv = %q, want 3", got)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		var list []map[string]any
		out := mustRun(t, s.env, "compute", "list", "-o", "yaml")
		if err := yaml.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("list -o yaml is not YAML: %v\n%s", err, out)
		}
		if len(list) != 2 || list[0]["name"] != "fmt-alpha" || list[1]["name"] != "fmt-beta" || list[1]["max_instances"] != 3 || list[1]["tier"] != "low_priority" {
			t.Errorf("list -o yaml = %v", list)
		}
		var one map[string]any
		if err := yaml.Unmarshal([]byte(mustRun(t, s.env, "compute", "show", "-n", "fmt-alpha", "-o", "yaml")), &one); err != nil {
			t.Fatal(err)
		}
		if one["name"] != "fmt-alpha" || one["size"] != "Standard_DS3_v2" {
			t.Errorf("show -o yaml = %v", one)
		}
	})
	t.Run("none", func(t *testing.T) {
		if out := mustRun(t, s.env, "compute", "list", "-o", "none"); out != "" {
			t.Errorf("list -o none printed %q", out)
		}
		if out := mustRun(t, s.env, "compute", "update", "-n", "fmt-alpha", "--max-instances", "2", "-o", "none"); out != "" {
			t.Errorf("update -o none printed %q", out)
		}
	})
	t.Run("query", func(t *testing.T) {
		names := runJSON[[]string](t, s.env, "compute", "list", "--query", "[].name")
		if !slices.Equal(names, []string{"fmt-alpha", "fmt-beta"}) {
			t.Errorf("list --query [].name = %v", names)
		}
		if _, code := mustFail(t, s.env, "compute", "list", "--query", "[?"); code != 1 {
			t.Errorf("invalid --query: exit code %d, want 1", code)
		}
		if stderr, _ := mustFail(t, s.env, "compute", "list", "-o", "xml"); !strings.Contains(stderr, "xml") {
			t.Errorf("-o xml: stderr %q", stderr)
		}
	})
}

// TestListSizesAndUsage checks the catalog commands on a default server.
func TestListSizesAndUsage(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	sizes := runJSON[[]map[string]any](t, s.env, "compute", "list-sizes", "-o", "json")
	ds3 := findByName(sizes, "Standard_DS3_v2")
	if ds3 == nil {
		t.Fatalf("list-sizes has no Standard_DS3_v2 (%d sizes)", len(sizes))
	}
	if jsonInt(ds3["v_cp_us"]) != 4 || jsonInt(ds3["memory_gb"]) != 14 {
		t.Errorf("Standard_DS3_v2: v_cp_us %v, memory_gb %v; want 4 and 14", ds3["v_cp_us"], ds3["memory_gb"])
	}
	if !hostHasGPUs() && findByName(sizes, "Standard_NC24ads_A100_v4") != nil {
		t.Errorf("list-sizes offers the GPU size Standard_NC24ads_A100_v4 on a server without GPUs")
	}
	// An Azure region name is an alias of the default location.
	if westus := runJSON[[]map[string]any](t, s.env, "compute", "list-sizes", "--location", "westus"); len(westus) != len(sizes) {
		t.Errorf("list-sizes --location westus has %d sizes, the default location %d", len(westus), len(sizes))
	}

	usages := runJSON[[]map[string]any](t, s.env, "compute", "list-usage", "-o", "json")
	families := 0
	for _, u := range usages {
		if jsonStr(u["type"]) != "Microsoft.MachineLearningServices/vmFamily/usages" {
			continue
		}
		families++
		if _, ok := u["limit"].(float64); !ok {
			t.Errorf("usage line without a numeric limit: %v", u)
		}
	}
	if families == 0 {
		t.Errorf("list-usage has no Microsoft.MachineLearningServices/vmFamily/usages lines: %v", usages)
	}
	// The table names each line by its family (the API's type is the
	// same for all of them).
	table := mustRun(t, s.env, "compute", "list-usage", "-o", "table")
	if !strings.Contains(table, "Limit") || !strings.Contains(table, "standardDSv2Family") || !strings.Contains(table, "Standard DSv2 Family vCPUs") {
		t.Errorf("list-usage -o table:\n%s", table)
	}
	// The sizes table: named columns, prices, natural order.
	sizesTable := mustRun(t, s.env, "compute", "list-sizes", "-o", "table")
	header := strings.SplitN(sizesTable, "\n", 2)[0]
	for _, h := range []string{"vCPUs", "Memory GB", "GPUs", "Family", "USD/Hour"} {
		if !strings.Contains(header, h) {
			t.Errorf("list-sizes -o table header %q lacks %q", header, h)
		}
	}
	d2, d16 := strings.Index(sizesTable, "Standard_D2_v3 "), strings.Index(sizesTable, "Standard_D16_v3 ")
	if d2 < 0 || d16 < 0 || d2 > d16 {
		t.Errorf("list-sizes -o table: want Standard_D2_v3 before Standard_D16_v3:\n%s", sizesTable)
	}
}

// TestAuth checks that the API needs the token and that the token files are private.
func TestAuth(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	const path = "/api/v1/workspaces/default/computes"
	if code, h, body := s.httpDo(t, http.MethodGet, path, "", nil, nil); code != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("anonymous GET %s: %d (WWW-Authenticate %q) %s; want 401", path, code, h.Get("WWW-Authenticate"), body)
	}
	if code, _, body := s.httpDo(t, http.MethodGet, "/healthz", "", nil, nil); code != http.StatusOK {
		t.Errorf("GET /healthz: %d %s; want 200", code, body)
	}
	if code, _, body := s.httpDo(t, http.MethodGet, path, "shoal_not-the-token", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("GET %s with a wrong token: %d %s; want 401", path, code, body)
	}
	if code, _, body := s.httpDo(t, http.MethodPut, path+"/anon-cluster", "", []byte(`{"name":"anon-cluster"}`), nil); code != http.StatusUnauthorized {
		t.Errorf("anonymous PUT: %d %s; want 401", code, body)
	}
	if code, _, body := s.httpDo(t, http.MethodGet, path, s.adminToken(t), nil, nil); code != http.StatusOK {
		t.Errorf("GET %s with the admin token: %d %s; want 200", path, code, body)
	}

	for _, p := range []string{filepath.Join(s.dataDir, "admin.token"), filepath.Join(s.home, ".config", "shoal", "config.yaml")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	cfg, err := os.ReadFile(filepath.Join(s.home, ".config", "shoal", "config.yaml"))
	if err != nil || !strings.Contains(string(cfg), s.url) || !strings.Contains(string(cfg), s.adminToken(t)) {
		t.Errorf("client config does not point at %s with the admin token: %v\n%s", s.url, err, cfg)
	}

	// The CLI with a wrong token (SHOAL_TOKEN overrides the config) fails.
	stderr, code := mustFail(t, append(slices.Clone(s.env), "SHOAL_TOKEN=shoal_wrong"), "compute", "list")
	if code != 1 || !strings.Contains(stderr, "not valid") {
		t.Errorf("compute list with a wrong token: exit code %d, stderr %q", code, stderr)
	}
}

// TestUnknownKey refuses a YAML key the schema does not know, naming it.
func TestUnknownKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	// Seed 000 speaks of max_nodes, but the YAML key is max_instances.
	stderr, code := mustFail(t, s.env, "compute", "create", "-f", writeVariant(t, "location-example.yml", "max_instances: 2", "max_nodes: 2"))
	if code != 1 || !strings.Contains(stderr, "max_nodes") {
		t.Errorf("unknown key max_nodes: exit code %d, stderr %q", code, stderr)
	}
	nested := filepath.Join(t.TempDir(), "nested.yml")
	if err := os.WriteFile(nested, []byte("name: nested-unknown\nsize: Standard_DS3_v2\nnetwork_settings:\n  vnet: ml-vnet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, code = mustFail(t, s.env, "compute", "create", "-f", nested)
	if code != 1 || !strings.Contains(stderr, "network_settings.vnet") {
		t.Errorf("unknown key network_settings.vnet: exit code %d, stderr %q", code, stderr)
	}
	if names, _ := listNames(t, s.env, "default"); len(names) != 0 {
		t.Errorf("refused documents created computes: %v", names)
	}
}

// TestStaleETag sends a PUT with an outdated If-Match: 412, nothing lost.
func TestStaleETag(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	token := s.adminToken(t)
	mustRun(t, s.env, "compute", "create", "-f", seedFile(t, "location-example.yml"))
	const path = "/api/v1/workspaces/default/computes/location-example"
	code, h, body := s.httpDo(t, http.MethodGet, path, token, nil, nil)
	if code != http.StatusOK || h.Get("ETag") == "" {
		t.Fatalf("GET %s: %d, ETag %q: %s", path, code, h.Get("ETag"), body)
	}
	staleETag, staleBody := h.Get("ETag"), body

	mustRun(t, s.env, "compute", "update", "--name", "location-example", "--max-instances", "3")

	code, _, resp := s.httpDo(t, http.MethodPut, path, token, staleBody, map[string]string{"If-Match": staleETag})
	if code != http.StatusPreconditionFailed {
		t.Fatalf("PUT with the stale If-Match %s: %d %s; want 412", staleETag, code, resp)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(resp, &e); err != nil || e.Error.Code != "precondition_failed" {
		t.Errorf("412 body = %s, want error code precondition_failed", resp)
	}
	if c := show(t, s, "location-example"); jsonInt(c["max_instances"]) != 3 {
		t.Errorf("max_instances = %v after the stale PUT, want the CLI's 3", c["max_instances"])
	}

	// Read again, write with the current ETag: accepted.
	_, h, _ = s.httpDo(t, http.MethodGet, path, token, nil, nil)
	if h.Get("ETag") == staleETag {
		t.Fatalf("ETag %s did not change on update", staleETag)
	}
	if code, _, resp := s.httpDo(t, http.MethodPut, path, token, staleBody, map[string]string{"If-Match": h.Get("ETag")}); code != http.StatusOK {
		t.Errorf("PUT with the current If-Match: %d %s; want 200", code, resp)
	}
	if c := show(t, s, "location-example"); jsonInt(c["max_instances"]) != 2 {
		t.Errorf("max_instances = %v after the fresh PUT, want 2", c["max_instances"])
	}
}

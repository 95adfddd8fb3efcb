package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// A user of one workspace sees nothing of another where they hold no
// role: these tests are the attacks, written first, from a Contributor of
// "default" towards "secret-team".

// secretTeam makes the workspace secret-team, where carl (a Contributor
// of default, whose token it returns) holds no role.
func secretTeam(t *testing.T, e *testEnv) string {
	t.Helper()
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"secret-team"}`, http.StatusCreated)
	return addUser(t, e, "carl", "Contributor")
}

// TestIdentitiesListedPerWorkspace: GET /api/v1/identities lists to a
// user the identities of the workspaces they hold a role in — the
// system-assigned identities of those workspaces' computes and the
// user-assigned identities granted a role there — and none of another
// workspace's; an administrator sees them all.
func TestIdentitiesListedPerWorkspace(t *testing.T) {
	e := newTestEnv(t)
	carl := secretTeam(t, e)
	for _, name := range []string{"ours-id", "theirs-id", "unassigned-id"} {
		mustSend(t, e, e.admin, "POST", "/api/v1/identities", `{"name":"`+name+`"}`, http.StatusCreated)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/roleassignments", `{"principal":"identity:ours-id","role":"Reader"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/secret-team/roleassignments", `{"principal":"identity:theirs-id","role":"Reader"}`, http.StatusCreated)
	for _, ws := range []string{"default", "secret-team"} {
		mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/"+ws+"/computes/gpu",
			`{"name":"gpu","size":"Standard_DS3_v2","max_instances":1,"identity":{"type":"system_assigned"}}`, http.StatusCreated)
	}
	names := func(tok string) []string {
		t.Helper()
		var list struct {
			Value []struct {
				Name string `json:"name"`
			} `json:"value"`
		}
		if err := json.Unmarshal(mustSend(t, e, tok, "GET", "/api/v1/identities", "", http.StatusOK).body, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, i := range list.Value {
			out = append(out, i.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(carl), []string{"default.gpu", "ours-id"}; !slices.Equal(got, want) {
		t.Errorf("identities a Contributor of default lists: %v, want %v", got, want)
	}
	if got, want := names(e.admin), []string{"default.gpu", "ours-id", "secret-team.gpu", "theirs-id", "unassigned-id"}; !slices.Equal(got, want) {
		t.Errorf("identities an administrator lists: %v, want %v", got, want)
	}
}

// TestInstanceNameTakenElsewhereNamesNoWorkspace: instance names are
// unique across a location, so an instance name taken in secret-team is
// refused in default too — with the rule, but without the name of a
// workspace the caller cannot read (natively and on ARM). An
// administrator's refusal names it.
func TestInstanceNameTakenElsewhereNamesNoWorkspace(t *testing.T) {
	e := newTestEnv(t)
	carl := secretTeam(t, e)
	const doc = `{"name":"cione","type":"computeinstance","size":"Standard_DS3_v2"}`
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/secret-team/computes/cione", doc, http.StatusCreated)
	const arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes/cione?api-version=2024-04-01"
	for what, r := range map[string]reply{
		"native": send(t, e, carl, "PUT", "/api/v1/workspaces/default/computes/cione", doc, nil),
		"ARM":    send(t, e, carl, "PUT", arm, `{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2"}}}`, nil),
	} {
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), "unique across a location") {
			t.Errorf("%s: a name taken in another workspace: %s, want 409 naming the rule", what, r)
		}
		if strings.Contains(strings.ToLower(string(r.body)), "secret-team") {
			t.Errorf("%s: the refusal names a workspace the caller cannot read: %s", what, r)
		}
	}
	r := send(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cione", doc, nil)
	if r.status != http.StatusConflict || !strings.Contains(string(r.body), "secret-team") {
		t.Errorf("an administrator's refusal: %s, want 409 naming secret-team", r)
	}
}

// TestLocationShowsOnlyTheCallersNodes: GET /api/v1/locations/local (and
// the list) counts and shows to a user only the nodes of the workspaces
// they hold a role in: a machine added by hand to secret-team's cluster
// is neither a host they see nor a node they count; an administrator
// sees both.
func TestLocationShowsOnlyTheCallersNodes(t *testing.T) {
	e := newTestEnv(t)
	carl := secretTeam(t, e)
	ids := map[string]string{}
	for _, ws := range []string{"default", "secret-team"} {
		mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/"+ws+"/computes/pool", `{"name":"pool","size":"Standard_DS3_v2","max_instances":5}`, http.StatusCreated)
		ids[ws] = mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/"+ws+"/computes/pool/nodes", "", http.StatusCreated).json(t)["node_id"].(string)
	}
	type detail struct {
		Name  string `json:"name"`
		Nodes int    `json:"nodes"`
		Hosts []struct {
			Name string `json:"name"`
		} `json:"hosts"`
	}
	hosts := func(d detail) string {
		var out []string
		for _, h := range d.Hosts {
			out = append(out, h.Name)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		who, tok  string
		see, hide []string
		nodes     int
	}{
		{"carl", carl, []string{ids["default"]}, []string{ids["secret-team"]}, 1},
		{"admin", e.admin, []string{ids["default"], ids["secret-team"]}, nil, 2},
	} {
		var one detail
		if err := json.Unmarshal(mustSend(t, e, c.tok, "GET", "/api/v1/locations/local", "", http.StatusOK).body, &one); err != nil {
			t.Fatal(err)
		}
		var list struct {
			Value []detail `json:"value"`
		}
		if err := json.Unmarshal(mustSend(t, e, c.tok, "GET", "/api/v1/locations", "", http.StatusOK).body, &list); err != nil {
			t.Fatal(err)
		}
		for _, d := range list.Value {
			if d.Name == "local" {
				if hosts(d) != hosts(one) || d.Nodes != one.Nodes {
					t.Errorf("%s: locations lists local as %+v, locations/local shows %+v", c.who, d, one)
				}
			}
		}
		if one.Nodes != c.nodes {
			t.Errorf("%s: locations/local counts %d nodes, want %d", c.who, one.Nodes, c.nodes)
		}
		for _, id := range c.see {
			if !strings.Contains(hosts(one), id) {
				t.Errorf("%s: locations/local hosts %q, want %s among them", c.who, hosts(one), id)
			}
		}
		for _, id := range c.hide {
			if strings.Contains(hosts(one), id) {
				t.Errorf("%s: locations/local shows %s, a node of secret-team", c.who, id)
			}
		}
	}
}

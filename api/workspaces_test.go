package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// TestWorkspaceListShowsOnlyYours: a user learns of the workspaces where
// they hold a role, not of everyone's; an administrator sees all. The ARM
// workspace read needs a role there too.
func TestWorkspaceListShowsOnlyYours(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"secret-project"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"team"}`, http.StatusCreated)
	bob := addUser(t, e, "bob", identity.RoleReader)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/team/roleassignments", `{"principal":"user:bob","role":"Contributor"}`, http.StatusCreated)
	dave := addUser(t, e, "dave", "")

	names := func(tok string) []string {
		r := mustSend(t, e, tok, "GET", "/api/v1/workspaces", "", http.StatusOK)
		var list struct {
			Value []core.Workspace `json:"value"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, w := range list.Value {
			out = append(out, w.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(bob), []string{"default", "team"}; !slices.Equal(got, want) {
		t.Errorf("bob lists %v, want %v", got, want)
	}
	if got := names(dave); len(got) != 0 {
		t.Errorf("dave, with no role, lists %v, want none", got)
	}
	if got, want := names(e.admin), []string{"default", "secret-project", "team"}; !slices.Equal(got, want) {
		t.Errorf("admin lists %v, want %v", got, want)
	}
	const arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/"
	mustSend(t, e, dave, "GET", arm+"secret-project?api-version=2024-04-01", "", http.StatusForbidden)
	mustSend(t, e, bob, "GET", arm+"team?api-version=2024-04-01", "", http.StatusOK)
}

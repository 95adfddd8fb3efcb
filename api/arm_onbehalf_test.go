package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The ARM facade's personalComputeInstanceSettings is create on behalf of:
// a Contributor may not use it to run a setup script, or log in with her
// own key, as another user's account, nor create for someone who has no
// role in the workspace; an administrator still creates with a script.
func TestARMInstanceOnBehalfOfIsGuarded(t *testing.T) {
	e := newTestEnv(t)
	const arm = "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.MachineLearningServices/workspaces/"
	const v = "?api-version=2024-04-01"
	addUser(t, e, "alice", "Reader")
	mallory := addUser(t, e, "mallory", "Contributor")
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"malws"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/malws/roleassignments", `{"principal":"user:mallory","role":"Contributor"}`, http.StatusCreated)
	doc := func(extra string) string {
		return `{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2",` + extra +
			`"personalComputeInstanceSettings":{"assignedUser":{"objectId":"alice","tenantId":"adfs"}}}}}`
	}
	script := `"setupScripts":{"scripts":{"creationScript":{"scriptSource":"inline","scriptData":"Y2F0IH4vLi4vKi9ob21lL3NlY3JldC50eHQ=","timeout":"5m"}}},`
	sshKey := `"sshSettings":{"sshPublicAccess":"Enabled","adminPublicKey":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMallorysOwnKeyMallorysOwnKeyMallory0 mallory@evil"},`
	for _, c := range []struct {
		name, token, path, body string
		want                    int
		says                    string
	}{
		{"in malws, where alice has no role", mallory, arm + "malws/computes/malci" + v, doc(script), http.StatusBadRequest, "create_on_behalf_of.user_object_id"},
		{"a setup script for alice", mallory, arm + "default/computes/malcia" + v, doc(script), http.StatusForbidden, "setup_scripts"},
		{"mallory's key on alice's instance", mallory, arm + "default/computes/malcib" + v, doc(sshKey), http.StatusForbidden, "ssh_settings.ssh_key_value"},
		{"a plain instance for alice", mallory, arm + "default/computes/malcic" + v, doc(""), http.StatusCreated, ""},
		{"the admin, with a script", e.admin, arm + "default/computes/adminci" + v, doc(script), http.StatusCreated, ""},
	} {
		r := send(t, e, c.token, "PUT", c.path, c.body, nil)
		if r.status != c.want || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %s; want %d naming %q", c.name, r, c.want, c.says)
		}
	}
}

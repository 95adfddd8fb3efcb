package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
)

// TestAddNodeIsItsOwnPermission: joining a machine to a cluster puts code
// of whoever controls that machine next to everyone's jobs, so it is an
// action of its own: an Owner and a custom role granting it may add a
// node, a Contributor may not; the node records who added it.
func TestAddNodeIsItsOwnPermission(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/pool", `{"name":"pool","size":"Standard_DS3_v2","max_instances":5}`, http.StatusCreated)
	mustSend(t, e, e.admin, "POST", "/api/v1/roles", `{"name":"machine-joiner","actions":["computes/read","`+identity.ActComputesJoinNode+`"]}`, http.StatusCreated)
	contributor := addUser(t, e, "bob", identity.RoleContributor)
	owner := addUser(t, e, "carol", identity.RoleOwner)
	joiner := addUser(t, e, "jo", "machine-joiner")

	const nodes = "/api/v1/workspaces/default/computes/pool/nodes"
	r := send(t, e, contributor, "POST", nodes, "", nil)
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), identity.ActComputesJoinNode) {
		t.Errorf("a Contributor's add-node: %s, want 403 naming %s", r, identity.ActComputesJoinNode)
	}
	added := map[string]string{}
	for who, tok := range map[string]string{"carol": owner, "jo": joiner} {
		r := mustSend(t, e, tok, "POST", nodes, "", http.StatusCreated)
		added[r.json(t)["node_id"].(string)] = "user:" + who
	}
	r = mustSend(t, e, owner, "GET", nodes, "", http.StatusOK)
	var list struct {
		Value []node.Node `json:"value"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Value) != 2 {
		t.Fatalf("nodes after two add-node: %s", r)
	}
	for _, n := range list.Value {
		if want := added[n.ID]; n.AddedBy != want {
			t.Errorf("node %s: added_by %q, want %q", n.ID, n.AddedBy, want)
		}
	}
}

// TestAddNodeRespectsMaxInstances: a cluster never has more live nodes
// than max_instances, pending ones included; a node that left frees its
// place.
func TestAddNodeRespectsMaxInstances(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/one", `{"name":"one","size":"Standard_DS3_v2","max_instances":1}`, http.StatusCreated)
	const nodes = "/api/v1/workspaces/default/computes/one/nodes"
	first := mustSend(t, e, e.admin, "POST", nodes, "", http.StatusCreated).json(t)["node_id"].(string)
	r := send(t, e, e.admin, "POST", nodes, "", nil)
	if r.status != http.StatusConflict && r.status != http.StatusTooManyRequests && r.status != http.StatusForbidden {
		t.Errorf("second add-node on a cluster with max_instances 1: %s, want a refusal", r)
	}
	if !strings.Contains(string(r.body), "max_instances") {
		t.Errorf("the refusal does not name max_instances: %s", r)
	}
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if ns, _ := e.svc.ListNodes(ctx, "default", "one"); len(ns) != 1 {
		t.Errorf("%d nodes after the refused add-node, want 1", len(ns))
	}
	// Removing the pending node frees its place.
	mustSend(t, e, e.admin, "DELETE", nodes+"/"+first, "", http.StatusAccepted)
	mustSend(t, e, e.admin, "POST", nodes, "", http.StatusCreated)
}

// TestJoinTokenIsBoundToItsNode: the token add-node printed for node X
// joins only X; presented as node Y it is refused and Y stays unjoined.
func TestJoinTokenIsBoundToItsNode(t *testing.T) {
	e := newTestEnv(t)
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/pool", `{"name":"pool","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	x, err := e.svc.AddStaticNode(ctx, "default", "pool")
	if err != nil {
		t.Fatal(err)
	}
	y, err := e.svc.AddStaticNode(ctx, "default", "pool")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.JoinNode(context.Background(), x.JoinToken, node.JoinRequest{NodeID: y.NodeID, Address: "127.0.0.1", Port: 5001}); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("X's token joining as Y: %v, want %s", err, core.EUNAUTHORIZED)
	}
	// Over HTTP too, as the agent does it.
	body := `{"node_id":"` + y.NodeID + `","address":"127.0.0.1","port":5001}`
	if r := send(t, e, x.JoinToken, "POST", "/agent/v1/join", body, nil); r.status != http.StatusUnauthorized {
		t.Errorf("X's token joining as Y over HTTP: %s, want 401", r)
	}
	ns, err := e.svc.ListNodes(ctx, "default", "pool")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.State != node.NodePreparing {
			t.Errorf("node %s is %s after a join with another node's token", n.ID, n.State)
		}
	}
	// X's token still joins X.
	if _, err := e.svc.JoinNode(context.Background(), x.JoinToken, node.JoinRequest{NodeID: x.NodeID, Address: "127.0.0.1", Port: 5001}); err != nil {
		t.Errorf("X's token joining as X: %v", err)
	}
}

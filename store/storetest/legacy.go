package storetest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/assettest"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// legacyCreated is when the legacy budgets were created.
var legacyCreated = time.Date(2025, time.March, 14, 14, 9, 26, 535897000, time.UTC)

// legacyBudgets are the budgets LegacySettings holds for workspace "ws".
var legacyBudgets = []*money.Budget{
	{Scope: "tag:team=a/b", Limit: 10.5, Period: "day", Action: "warn", CreatedOn: legacyCreated},
	{Scope: "workspace", Limit: 500, Period: "month", Action: "block", CreatedOn: legacyCreated, CreatedBy: "alice"},
}

// LegacySettings are settings rows as a store before schema version 20
// held a workspace's budgets, vCPU quotas and limits (JSON documents, as
// the service wrote them), beside settings that are not a workspace's.
// A store's tests write them into a store migrated to version 19, migrate
// it to the newest version and call CheckLegacySettings.
func LegacySettings() map[string]string {
	b, _ := json.Marshal(legacyBudgets)
	none, _ := json.Marshal([]*money.Budget(nil)) // the last budget deleted
	return map[string]string{
		"budgets/ws":                         string(b),
		"budgets/empty":                      string(none),
		"workspace_quotas/ws":                `{"standarddfamily":-1,"standardncfamily":24}`,
		"workspace_limits/ws":                `{"max_log_bytes":1048576}`,
		"workspace_limits/other":             `{"max_log_bytes":1,"storage_quota_bytes":2}`,
		"admin_token_id":                     "tok-123",
		"budget_alert/ws/workspace/month":    "2025-03-01T00:00:00Z 80",
		"budgets_note_not_a_workspace_key":   "kept",
		"workspace_quotas_not_a_workspace":   "kept",
		"workspace_limits_not_a_workspace_x": "kept",
	}
}

// CheckLegacySettings checks that s, migrated from a store holding
// LegacySettings, reads the workspaces' budgets, quotas and limits
// through their typed methods and keeps the other settings.
func CheckLegacySettings(t *testing.T, s store.Store) {
	t.Helper()
	stcheck.View(t, s, func(tx store.Tx) error {
		if got, err := tx.ListBudgets("WS"); err != nil || !reflect.DeepEqual(got, legacyBudgets) {
			t.Errorf("ListBudgets(ws) = %s, %v; want %s", stcheck.JSON(got), err, stcheck.JSON(legacyBudgets))
		}
		if got, err := tx.ListBudgets("empty"); err != nil || len(got) != 0 {
			t.Errorf("ListBudgets(empty) = %s, %v; want none", stcheck.JSON(got), err)
		}
		wantQ := map[string]int{"standarddfamily": -1, "standardncfamily": 24}
		if got, err := tx.GetWorkspaceQuotas("ws"); err != nil || !reflect.DeepEqual(got, wantQ) {
			t.Errorf("GetWorkspaceQuotas(ws) = %v, %v; want %v", got, err, wantQ)
		}
		for ws, want := range map[string]money.WorkspaceLimits{"ws": {MaxLogBytes: 1 << 20}, "other": {MaxLogBytes: 1, StorageQuotaBytes: 2}} {
			if got, err := tx.GetWorkspaceLimits(ws); err != nil || got != want {
				t.Errorf("GetWorkspaceLimits(%s) = %+v, %v; want %+v", ws, got, err, want)
			}
		}
		for k, v := range LegacySettings() {
			got, err := tx.GetSetting(k)
			moved := k == "budgets/ws" || k == "budgets/empty" || k == "workspace_quotas/ws" || k == "workspace_limits/ws" || k == "workspace_limits/other"
			switch {
			case moved && core.ErrorCode(err) != core.ENOTFOUND:
				t.Errorf("setting %q after the migration = %q, %v; want it moved out", k, got, err)
			case !moved && (err != nil || got != v):
				t.Errorf("setting %q after the migration = %q, %v; want %q kept", k, got, err, v)
			}
		}
		return nil
	})
}

// MigrationsUpTo is stcheck.MigrationsUpTo (the stores' tests call it
// from here).
var MigrationsUpTo = stcheck.MigrationsUpTo

// LegacyNodeRows are INSERT statements of nodes as a store at version 28
// held them (before the live column): their states and draining flags
// only in their documents.
func LegacyNodeRows() []string {
	row := func(id, compute, state string, draining bool) string {
		return fmt.Sprintf(`INSERT INTO nodes (id, workspace, workspace_key, compute_key, location, provider_ref,
			join_token_hash, join_token_expires, credential_hash, version, doc, last_heartbeat, gen)
			VALUES ('%s', 'prod', 'prod', 'prod/%s', 'lab', '', 'j-%s', 0, 'c-%s', 1,
			'{"node_id":"%s","compute":"%s","node_state":"%s","draining":%t}', 0, 0)`,
			id, compute, id, id, id, compute, state, draining)
	}
	return []string{
		row("n-1", "gpu", node.NodePreparing, false),
		row("n-2", "gpu", node.NodeIdle, false),
		row("n-3", "gpu", node.NodeRunning, false),
		row("n-4", "gpu", node.NodeIdle, true),
		row("n-5", "gpu", node.NodeUnusable, false),
		row("n-6", "gpu", node.NodeLeaving, false),
		row("n-7", "cpu", node.NodeIdle, false),
	}
}

// CheckLegacyNodes checks that the nodes of LegacyNodeRows are counted
// by their documents' states once migrated.
func CheckLegacyNodes(t *testing.T, s store.Store) {
	t.Helper()
	for compute, want := range map[string]int{"gpu": 3, "cpu": 1} {
		var got int
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.CountLiveNodes("prod", compute)
			return err
		})
		if got != want {
			t.Errorf("after the migration, CountLiveNodes(prod, %s) = %d, want %d", compute, got, want)
		}
	}
}

// legacyNodeStateRows are INSERT statements of nodes as a store at
// version 38 held them (before the state, draining and pulling columns):
// all only in their documents, each last heard at 1,000,000 µs since the
// epoch.
func legacyNodeStateRows() []string {
	var out []string
	// The running node drains, the idle one pulls its cluster's images,
	// the preempted one has JSON nulls for both.
	extra := []string{"", `,"pulling_images":["registry.example/train:1"]`, `,"draining":true`, `,"draining":false`, "", `,"pulling_images":null,"draining":null`}
	for i, state := range []string{node.NodePreparing, node.NodeIdle, node.NodeRunning, node.NodeLeaving, node.NodeUnusable, node.NodePreempted} {
		id := fmt.Sprintf("s-%d", i)
		out = append(out, fmt.Sprintf(`INSERT INTO nodes (id, workspace, workspace_key, compute_key, location, provider_ref,
			join_token_hash, join_token_expires, credential_hash, version, doc, last_heartbeat, gen, live)
			VALUES ('%s', 'prod', 'prod', 'prod/gpu', 'lab', '', 'j-%s', 0, 'c-%s', 1,
			'{"node_id":"%s","compute":"gpu","node_state":"%s"%s}', 1000000, 0, 0)`, id, id, id, id, state, extra[i]))
	}
	return out
}

// checkLegacyNodeStates checks that the nodes of legacyNodeStateRows are
// due by their documents' states once migrated (all but the idle and
// running ones, when none is silent), and counted by their documents'
// states, draining flags and pulls.
func checkLegacyNodeStates(t *testing.T, s store.Store) {
	t.Helper()
	var got []string
	stcheck.View(t, s, func(tx store.Tx) error {
		nodes, err := tx.ListNodesDue(time.UnixMicro(999999))
		for _, n := range nodes {
			got = append(got, n.ID+" "+n.State)
		}
		return err
	})
	want := []string{"s-0 preparing", "s-3 leaving", "s-4 unusable", "s-5 preempted"}
	if !slices.Equal(got, want) {
		t.Errorf("after the migration, ListNodesDue = %q, want %q", got, want)
	}
	var counts []node.StateCount
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		counts, err = tx.CountNodesByState("prod", "gpu")
		return err
	})
	wantCounts := []node.StateCount{
		{State: node.NodeIdle, Pulling: true, Count: 1},
		{State: node.NodeLeaving, Count: 1},
		{State: node.NodePreempted, Count: 1},
		{State: node.NodePreparing, Count: 1},
		{State: node.NodeRunning, Draining: true, Count: 1},
		{State: node.NodeUnusable, Count: 1},
	}
	if !slices.Equal(counts, wantCounts) {
		t.Errorf("after the migration, CountNodesByState = %+v, want %+v", counts, wantCounts)
	}
}

// A MigrationCase is a store as an older Shoal left it — migrated up to
// Version, then Fill's rows written — and what today's Shoal must read
// from it once its migrations ran (Check). Each store's tests build
// every case on a database of their own (MigrationCases).
type MigrationCase struct {
	Name    string
	Version int
	Fill    func(raw *sql.DB) error
	Check   func(t *testing.T, s store.Store)
}

// MigrationCases are the migrations that move or derive data: 0020 moves
// a workspace's budgets, quotas and limits out of settings into their
// tables; 0029 counts the live nodes from their documents; 0030 sums
// each run's metrics into its running totals.
func MigrationCases() []MigrationCase {
	return []MigrationCase{
		{Name: "0020 moves workspace settings", Version: 19, Check: CheckLegacySettings, Fill: func(raw *sql.DB) error {
			for k, v := range LegacySettings() {
				if _, err := raw.Exec(`INSERT INTO settings (key, value) VALUES ($1, $2)`, k, v); err != nil {
					return err
				}
			}
			return nil
		}},
		{Name: "0029 counts live nodes", Version: 28, Check: CheckLegacyNodes, Fill: func(raw *sql.DB) error {
			for _, q := range LegacyNodeRows() {
				if _, err := raw.Exec(q); err != nil {
					return err
				}
			}
			return nil
		}},
		{Name: "0030 sums run metrics", Version: 29, Check: assettest.CheckLegacyMetrics, Fill: assettest.FillLegacyMetrics},
		{Name: "0039 gives nodes their state column", Version: 38, Check: checkLegacyNodeStates, Fill: func(raw *sql.DB) error {
			for _, q := range legacyNodeStateRows() {
				if _, err := raw.Exec(q); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/store/sqlstore"
)

// TestQueryPlans checks that the queries the scheduler and the job
// lifecycle run often search an index and sort nothing.
func TestQueryPlans(t *testing.T) {
	db, err := Open(t.Context(), Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The index each query must use, where one is meant for it.
	indexes := map[string]string{
		"ListQueuedJobs": "jobs_queue", "GetJob": "sqlite_autoindex_jobs_1",
		"FindNodeByCredentialHash": "nodes_credential_hash", "FindNodeByJoinTokenHash": "nodes_join_token_hash",
		"ListAttempts": "attempts_job", "FindUserByOIDC": "users_oidc",
		"SummarizeMetrics": "sqlite_autoindex_run_metric_totals_1", "ListNodesChangedSince": "nodes_gen",
		"ListNodesDue": "nodes_due",
	}
	for _, q := range sqlstore.HotQueries() {
		index := indexes[q.Name]
		rows, err := db.rw.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q.SQL, q.Args...)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		var steps []string
		for rows.Next() {
			var id, parent, notUsed int64
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		plan := strings.Join(steps, "; ")
		if !strings.Contains(plan, "USING INDEX") && !strings.Contains(plan, "USING PRIMARY KEY") {
			t.Errorf("%s: plan %q uses no index", q.Name, plan)
		}
		if index != "" && !strings.Contains(plan+" ", "INDEX "+index+" ") {
			t.Errorf("%s: plan %q does not use index %s", q.Name, plan, index)
		}
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: plan %q sorts", q.Name, plan)
		}
	}
}

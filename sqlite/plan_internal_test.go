package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

// TestQueryPlans checks that the queries the scheduler and the job
// lifecycle run often search an index and sort nothing.
func TestQueryPlans(t *testing.T) {
	db, err := Open(t.Context(), Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type query struct {
		name  string
		sql   string
		args  []any
		index string // the index the plan must use; "" for any
	}
	queries := []query{
		{"ListQueuedJobs", queryQueuedJobs, []any{shoal.JobQueued}, "jobs_queue"},
		{"GetJob", queryGetJob, []any{"w", "n"}, "sqlite_autoindex_jobs_1"},
		{"FindNodeByCredentialHash", queryNodeByCredentialHash, []any{"h"}, "nodes_credential_hash"},
		{"FindNodeByJoinTokenHash", queryNodeByJoinTokenHash, []any{"h"}, "nodes_join_token_hash"},
		{"ListAttempts", queryListAttempts, []any{"w", "j"}, "attempts_job"},
		{"FindUserByOIDC", queryUserByOIDC, []any{"i", "s"}, "users_oidc"},
		{"ListSigningKeys", querySigningKeys, nil, ""},
	}
	for _, f := range [][2]string{{"p", ""}, {"", "w"}, {"p", "w"}} {
		q, args := listRoleAssignmentsQuery(f[0], f[1])
		queries = append(queries, query{"ListRoleAssignments " + q, q, args, ""})
	}
	for _, f := range []shoal.AuditFilter{
		{PrincipalID: "p"},
		{PrincipalID: "p", Limit: 10},
		{PrincipalID: "p", Target: "t"},
		{PrincipalID: "p", Since: time.Unix(1, 0)},
		{Since: time.Unix(1, 0)},
		{Since: time.Unix(1, 0), Limit: 10},
		{Target: "t", Limit: 10},
		{Limit: 10},
	} {
		q, args := listAuditQuery(f)
		queries = append(queries, query{"ListAudit " + q, q, args, ""})
	}
	for _, f := range []shoal.JobFilter{
		{Workspace: "w"},
		{Workspace: "w", Limit: 10},
		{Workspace: "w", Statuses: []string{shoal.JobRunning}},
		{Workspace: "w", Statuses: []string{shoal.JobQueued, shoal.JobRunning}, Limit: 10},
		{Workspace: "w", Compute: "c"},
		{Workspace: "w", Compute: "c", Statuses: []string{shoal.JobQueued}},
	} {
		q, args := listJobsQuery(f)
		queries = append(queries, query{"ListJobs " + q, q, args, ""})
	}
	for _, f := range []shoal.NodeFilter{
		{},
		{Workspace: "w"},
		{Workspace: "w", Compute: "c"},
		{Workspace: "w", Compute: "c", Location: "l"},
		{Location: "l"},
	} {
		q, args := listNodesQuery(f)
		queries = append(queries, query{"ListNodes " + q, q, args, ""})
	}
	for _, q := range queries {
		rows, err := db.rw.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q.sql, q.args...)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
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
			t.Errorf("%s: plan %q uses no index", q.name, plan)
		}
		if q.index != "" && !strings.Contains(plan, "INDEX "+q.index+" ") {
			t.Errorf("%s: plan %q does not use index %s", q.name, plan, q.index)
		}
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: plan %q sorts", q.name, plan)
		}
	}
}

package sqlstore

import (
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/identstore"
)

// HotQuery is a query the scheduler, the job lifecycle or the API runs
// often, with arguments: each store checks that its plan uses an index
// and sorts nothing.
type HotQuery struct {
	Name string
	SQL  string
	Args []any
}

// HotQueries returns the queries whose plans matter.
func HotQueries() []HotQuery {
	qs := []HotQuery{
		{"ListQueuedJobs", queryQueuedJobs, []any{job.JobQueued}},
		{"GetJob", queryGetJob, []any{"w", "n"}},
		{"FindNodeByCredentialHash", queryNodeByCredentialHash, []any{"h"}},
		{"FindNodeByJoinTokenHash", queryNodeByJoinTokenHash, []any{"h"}},
		{"ListAttempts", queryListAttempts, []any{"w", "j"}},
		{"FindUserByOIDC", identstore.QueryUserByOIDC, []any{"i", "s"}},
		{"ListSigningKeys", identstore.QuerySigningKeys, nil},
		// every log-batch checks its run's limits against these totals
		{"SummarizeMetrics", querySummarizeMetrics, []any{"w", "j"}},
		// every placement pass reads the nodes written since its last
		{"ListNodesChangedSince", queryNodesChangedSince, []any{int64(1)}},
		// every pass of the node loop looks for the nodes it may act on
		{"ListNodesDue", queryNodesDue, []any{int64(1)}},
	}
	for _, f := range [][2]string{{"p", ""}, {"", "w"}, {"p", "w"}} {
		q, args := identstore.ListRoleAssignmentsQuery(f[0], f[1])
		qs = append(qs, HotQuery{"ListRoleAssignments " + q, q, args})
	}
	for _, f := range []identity.AuditFilter{
		{PrincipalID: "p"},
		{PrincipalID: "p", Limit: 10},
		{PrincipalID: "p", Target: "t"},
		{PrincipalID: "p", Since: time.Unix(1, 0)},
		{Since: time.Unix(1, 0)},
		{Since: time.Unix(1, 0), Limit: 10},
		{Target: "t", Limit: 10},
		{Limit: 10},
	} {
		q, args := identstore.ListAuditQuery(f)
		qs = append(qs, HotQuery{"ListAudit " + q, q, args})
	}
	for _, f := range []job.JobFilter{
		{Workspace: "w"},
		{Workspace: "w", Limit: 10},
		{Workspace: "w", Statuses: []string{job.JobRunning}},
		{Workspace: "w", Statuses: []string{job.JobQueued, job.JobRunning}, Limit: 10},
		{Workspace: "w", Compute: "c"},
		{Workspace: "w", Compute: "c", Statuses: []string{job.JobQueued}},
	} {
		q, args := listJobsQuery(f)
		qs = append(qs, HotQuery{"ListJobs " + q, q, args})
	}
	for _, f := range []node.NodeFilter{
		{},
		{Workspace: "w"},
		{Workspace: "w", Compute: "c"},
		{Workspace: "w", Compute: "c", Location: "l"},
		{Location: "l"},
	} {
		q, args := listNodesQuery(f)
		qs = append(qs, HotQuery{"ListNodes " + q, q, args})
	}
	return qs
}

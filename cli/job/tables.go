package job

import (
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
)

// Table views: some lists read better in a table as other rows than the
// API's (a price out of a nested block, a node out of each rank, a total).
// They are for `-o table` without --query alone: JSON, YAML, TSV and CSV
// print the API's objects as they always have, so scripts keep working.

// attemptTableColumns are the columns of `job list-attempts -o table`.
var attemptTableColumns = []string{"number", "status", "nodes", "start_time", "end_time", "exit_code", "reason"}

// attemptRow is one attempt in a table with the nodes its ranks ran on.
type attemptRow struct {
	*job.Attempt
	Nodes string `json:"nodes"`
}

// attemptRows adds to each attempt the nodes of its ranks, in rank order,
// each once.
func attemptRows(list []*job.Attempt) []attemptRow {
	rows := make([]attemptRow, 0, len(list))
	for _, a := range list {
		var nodes []string
		for _, r := range a.Ranks {
			if r.NodeID != "" && !slices.Contains(nodes, r.NodeID) {
				nodes = append(nodes, r.NodeID)
			}
		}
		rows = append(rows, attemptRow{Attempt: a, Nodes: strings.Join(nodes, ",")})
	}
	return rows
}

package workspace

import (
	"github.com/shoal-ml/shoal/domain/format"
	"github.com/shoal-ml/shoal/domain/money"
)

// Table views: some lists read better in a table as other rows than the
// API's (a price out of a nested block, a node out of each rank, a total).
// They are for `-o table` without --query alone: JSON, YAML, TSV and CSV
// print the API's objects as they always have, so scripts keep working.

// costTableColumns are the columns of `cost report -o table`.
var costTableColumns = []string{"key", "node_hours", "usd", "dedicated_usd", "low_priority_usd"}

// costTotalKey names the total row of a cost table, in parentheses like
// the report's own "(idle)" line, so that it cannot be a compute's name.
const costTotalKey = "(total)"

// costRow is one line of a cost table: hours and money to two decimals
// (see amount).
type costRow struct {
	Key         string `json:"key"`
	NodeHours   string `json:"node_hours"`
	USD         string `json:"usd"`
	Dedicated   string `json:"dedicated_usd"`
	LowPriority string `json:"low_priority_usd"`
}

// costRows rounds each line of a cost report and adds a total row, the
// sum of the unrounded lines (so it can differ from the sum of the
// rounded cells by a cent). An empty report has no total.
func costRows(lines []money.CostLine) []costRow {
	rows := make([]costRow, 0, len(lines)+1)
	var total money.CostLine
	for _, l := range lines {
		rows = append(rows, newCostRow(l))
		total.NodeHours += l.NodeHours
		total.USD += l.USD
		total.Dedicated += l.Dedicated
		total.LowPriority += l.LowPriority
	}
	if len(lines) > 0 {
		total.Key = costTotalKey
		rows = append(rows, newCostRow(total))
	}
	return rows
}

func newCostRow(l money.CostLine) costRow {
	return costRow{Key: l.Key, NodeHours: amount(l.NodeHours), USD: amount(l.USD), Dedicated: amount(l.Dedicated), LowPriority: amount(l.LowPriority)}
}

// amount formats dollars (or hours) as format.USD does: to the cent, and
// an amount under half a cent with four significant digits, so that a
// short run does not look free (0.0001648).
func amount(f float64) string { return format.USD(f) }

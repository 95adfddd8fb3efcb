package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal"
)

// Table views: some lists read better in a table as other rows than the
// API's (a price out of a nested block, a node out of each rank, a total).
// They are for `-o table` without --query alone: JSON, YAML, TSV and CSV
// print the API's objects as they always have, so scripts keep working.

// tableView reports whether the output is a table of the command's own
// columns, the only output table views change.
func (g *Globals) TableView() bool { return g.Output == "table" && g.Query == "" }

// sizeTableColumns are the columns of `compute list-sizes -o table`.
var sizeTableColumns = []string{"name", "v_cp_us", "memory_gb", "gpus", "gpu_model", "family", "price_per_hour", "low_priority_price_per_hour"}

// sizeRow is one size in a table: Azure's facts and the hourly prices of
// its estimated_vm_prices block.
type sizeRow struct {
	Name                    string  `json:"name"`
	VCPUs                   int     `json:"v_cp_us"`
	MemoryGB                float64 `json:"memory_gb"`
	GPUs                    int     `json:"gpus"`
	GPUModel                string  `json:"gpu_model"`
	Family                  string  `json:"family"`
	PricePerHour            string  `json:"price_per_hour"`
	LowPriorityPricePerHour string  `json:"low_priority_price_per_hour"`
}

// sizeRows turns list-sizes' JSON into table rows in natural name order
// (Standard_D2_v3 before Standard_D16_v3). A price the server does not
// give (low priority on a size without it) is an empty cell.
func sizeRows(raw json.RawMessage) ([]sizeRow, error) {
	var sizes []struct {
		sizeRow
		Prices struct {
			Values []struct {
				RetailPrice float64 `json:"retail_price"`
				VMTier      string  `json:"vm_tier"`
			} `json:"values"`
		} `json:"estimated_vm_prices"`
	}
	if err := json.Unmarshal(raw, &sizes); err != nil {
		return nil, fmt.Errorf("list-sizes: reading the server's answer: %w", err)
	}
	rows := make([]sizeRow, 0, len(sizes))
	for _, s := range sizes {
		r := s.sizeRow
		for _, p := range s.Prices.Values {
			switch p.VMTier {
			case "Standard":
				r.PricePerHour = hourlyPrice(p.RetailPrice)
			case "LowPriority":
				r.LowPriorityPricePerHour = hourlyPrice(p.RetailPrice)
			}
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b sizeRow) int { return NaturalCompare(a.Name, b.Name) })
	return rows, nil
}

// hourlyPrice formats a price per hour to four decimals, the precision of
// Azure's retail prices (and of the server's estimated_vm_prices).
func hourlyPrice(usd float64) string { return strconv.FormatFloat(usd, 'f', 4, 64) }

// usageTableColumns are the columns of `compute list-usage -o table`.
var usageTableColumns = []string{"name", "description", "current_value", "limit"}

// usageRow is one quota line in a table. The API's type is the same for
// every VM family, so the row names the line by its name instead: the
// family as `shoal quota set --family` takes it, and Azure's description.
type usageRow struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	CurrentValue int    `json:"current_value"`
	Limit        string `json:"limit"`
}

// usageRows turns list-usage's JSON into table rows; a negative limit
// (none) reads "unlimited".
func usageRows(raw json.RawMessage) ([]usageRow, error) {
	var usages []shoal.Usage
	if err := json.Unmarshal(raw, &usages); err != nil {
		return nil, fmt.Errorf("list-usage: reading the server's answer: %w", err)
	}
	rows := make([]usageRow, 0, len(usages))
	for _, u := range usages {
		limit := strconv.Itoa(u.Limit)
		if u.Limit < 0 {
			limit = "unlimited"
		}
		rows = append(rows, usageRow{Name: u.Name.Value, Description: u.Name.LocalizedValue, CurrentValue: u.CurrentValue, Limit: limit})
	}
	return rows, nil
}

// attemptTableColumns are the columns of `job list-attempts -o table`.
var attemptTableColumns = []string{"number", "status", "nodes", "start_time", "end_time", "exit_code", "reason"}

// attemptRow is one attempt in a table with the nodes its ranks ran on.
type attemptRow struct {
	*shoal.Attempt
	Nodes string `json:"nodes"`
}

// attemptRows adds to each attempt the nodes of its ranks, in rank order,
// each once.
func attemptRows(list []*shoal.Attempt) []attemptRow {
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
func costRows(lines []shoal.CostLine) []costRow {
	rows := make([]costRow, 0, len(lines)+1)
	var total shoal.CostLine
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

func newCostRow(l shoal.CostLine) costRow {
	return costRow{Key: l.Key, NodeHours: amount(l.NodeHours), USD: amount(l.USD), Dedicated: amount(l.Dedicated), LowPriority: amount(l.LowPriority)}
}

// amount formats dollars (or hours) to the cent; an amount under half a
// cent, which would read 0.00, has four significant digits instead, so
// that a short run does not look free (0.0001648).
func amount(f float64) string {
	if f == 0 || math.Abs(f) >= 0.005 {
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(f))))
	return strconv.FormatFloat(f, 'f', decimals, 64)
}

package compute

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/shoal-ml/shoal/domain/catalog"
)

// Table views: some lists read better in a table as other rows than the
// API's (a price out of a nested block, a node out of each rank, a total).
// They are for `-o table` without --query alone: JSON, YAML, TSV and CSV
// print the API's objects as they always have, so scripts keep working.

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
	slices.SortStableFunc(rows, func(a, b sizeRow) int { return naturalCompare(a.Name, b.Name) })
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
	var usages []catalog.Usage
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

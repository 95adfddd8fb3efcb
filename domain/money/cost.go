package money

// CostLine is one group of a cost report.
type CostLine struct {
	Key         string  `json:"key"`
	NodeSeconds float64 `json:"node_seconds"`
	NodeHours   float64 `json:"node_hours"`
	USD         float64 `json:"usd"`
	Dedicated   float64 `json:"dedicated_usd"`
	LowPriority float64 `json:"low_priority_usd"`
}

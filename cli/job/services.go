package job

import (
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// serviceRow is one service of a job on one node, as `job show` tables
// it under the job's row.
type serviceRow struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Node     int    `json:"node"`
	Status   string `json:"status"`
	Endpoint string `json:"endpoint"`
	Error    string `json:"error"`
}

// serviceColumns are the columns of the services' table.
var serviceColumns = []string{"name", "type", "node", "status", "endpoint", "error"}

// serviceRows are the job's services, a row per node that serves each.
func serviceRows(j *job.Job) []serviceRow {
	var out []serviceRow
	for _, name := range core.SortedKeys(j.Services) {
		s := j.Services[name]
		if s == nil {
			continue
		}
		if len(s.Instances) == 0 {
			out = append(out, serviceRow{Name: name, Type: s.Type, Status: s.Status, Endpoint: s.Endpoint, Error: s.ErrorMessage})
			continue
		}
		for _, in := range s.Instances {
			out = append(out, serviceRow{Name: name, Type: s.Type, Node: in.NodeIndex, Status: in.Status, Endpoint: in.Endpoint, Error: in.ErrorMessage})
		}
	}
	return out
}

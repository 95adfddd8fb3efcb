package armjob

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// serviceNodesDoc turns a REST service's nodes ({nodesValueType: All},
// what azure-ai-ml sends for nodes="all") into the YAML's nodes: all.
func serviceNodesDoc(s obj, name string, y map[string]any) error {
	if !s.has("nodes") {
		return nil
	}
	if v := s.raw("nodes"); string(v) == "null" {
		return nil
	}
	n, err := s.sub("nodes")
	if err != nil {
		return err
	}
	t, err := n.str("nodesValueType", "nodes_value_type")
	if err != nil {
		return err
	}
	if !strings.EqualFold(t, "All") {
		return core.FieldErrorf("properties.services."+name+".nodes.nodesValueType", "must be All (serve on every node) or the nodes left out (the first node), got %q", core.Short(t))
	}
	y["nodes"] = "all"
	return nil
}

// addJobServices adds the job's own services to the answer's services,
// in Azure's JobService shape: jobServiceType, port, nodes, properties,
// and while the job runs their status, endpoint (the application
// proxy's, on the first node) and errorMessage.
func addJobServices(out map[string]any, j *job.Job) {
	for _, name := range core.SortedKeys(j.Services) {
		sv := j.Services[name]
		if _, azures := out[name]; sv == nil || azures {
			continue // Studio and Tracking stay Azure's
		}
		o := map[string]any{"jobServiceType": interactive.ServiceTypeREST(sv.Type)}
		if sv.Port != 0 {
			o["port"] = sv.Port
		}
		if sv.Nodes == "all" {
			o["nodes"] = map[string]any{"nodesValueType": "All"}
		}
		if len(sv.Properties) > 0 {
			o["properties"] = sv.Properties
		}
		setNonEmpty(o, "status", sv.Status)
		setNonEmpty(o, "endpoint", sv.Endpoint)
		setNonEmpty(o, "errorMessage", sv.ErrorMessage)
		out[name] = o
	}
}

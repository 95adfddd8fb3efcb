package compute

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// newComputeAttachCommand is az ml compute attach for Kubernetes: a
// kubernetes location attached as a compute (type: kubernetes).
func newComputeAttachCommand(g *cmdutil.Globals) *cobra.Command {
	var f computeFlags
	var resourceID, namespace, instanceType string
	cmd := &cobra.Command{
		Use:   "attach",
		Short: "Attach a kubernetes location as a compute (az ml compute attach --type Kubernetes)",
		Long: `Attach a kubernetes location as a compute: type: kubernetes, Azure's attached Kubernetes
compute. --resource-id names the location (its name, or the resource_id its config
declares); the namespace is the location's; the nodes are pods of --instance-type (default
the location's default instance type). See docs/guides/kubernetes.md.`,
		Example: `  shoal compute attach --type Kubernetes --name k8s-compute --resource-id k8s
  shoal compute attach -f k8s-compute.yml
  shoal compute attach -n gpus --resource-id /subscriptions/…/connectedClusters/prod --instance-type gpu-a100 --max-instances 2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc := map[string]any{}
			if f.file != "" {
				var err error
				if doc, err = cmdutil.ReadYAMLDocument(f.file); err != nil {
					return err
				}
			}
			if err := f.apply(cmd, doc, args); err != nil {
				return err
			}
			t, _ := doc["type"].(string)
			switch strings.ToLower(t) {
			case "":
				doc["type"] = compute.ComputeTypeKubernetes
			case compute.ComputeTypeKubernetes:
			default:
				return &core.Error{Code: core.EINVALID, Field: "type", Message: fmt.Sprintf(
					"type: %q cannot be attached; Shoal attaches kubernetes computes (virtual machines join a location instead: shoal compute add-node)", t)}
			}
			return applyComputeDoc(cmd, g, doc, f.noWait)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "YAML file with the compute definition (Azure's kubernetes compute YAML)")
	fs.StringVarP(&f.name, "name", "n", "", "compute name")
	fs.StringVarP(&f.typ, "type", "t", "", "compute type: Kubernetes (the default)")
	fs.StringVar(&resourceID, "resource-id", "", "the kubernetes location: its name, or the resource_id its config declares")
	fs.StringVar(&namespace, "namespace", "", "the pods' namespace (must be the location's; default it)")
	fs.StringVar(&instanceType, "instance-type", "", "instance type of the nodes (default the location's default_instance_type)")
	fs.StringVar(&f.minInstances, "min-instances", "", "minimum number of nodes (default 0)")
	fs.StringVar(&f.maxInstances, "max-instances", "", fmt.Sprintf("maximum number of nodes (default %d)", compute.DefaultKubernetesMaxInstances))
	fs.StringVar(&f.idleTime, "idle-time-before-scale-down", "", "seconds a node stays idle before its pod is deleted (default 120)")
	fs.StringVar(&f.description, "description", "", "description")
	fs.StringArrayVar(&f.tags, "tags", nil, "space-separated tags: key1=value1 key2=value2")
	fs.StringVar(&f.identityType, "identity-type", "", "managed identity: system_assigned or user_assigned (not both)")
	fs.StringSliceVar(&f.userAssigned, "user-assigned-identities", nil, "user-assigned identities (names or resource ids)")
	fs.StringArrayVar(&f.sets, "set", nil, "set a key of the document: --set max_instances=4 (repeatable)")
	fs.BoolVar(&f.noWait, "no-wait", false, "do not wait for the operation to finish")
	return cmd
}

// newComputeInstanceTypeCommand groups the instance type verbs.
func newComputeInstanceTypeCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "instance-type", Short: "Instance types of kubernetes computes and locations"}
	cmd.AddCommand(newComputeInstanceTypeListCommand(g))
	return cmd
}

// instanceTypeRow is one instance type in a table.
type instanceTypeRow struct {
	Name          string `json:"name"`
	Default       bool   `json:"default"`
	CPURequest    string `json:"cpu_request"`
	CPULimit      string `json:"cpu_limit"`
	MemoryRequest string `json:"memory_request"`
	MemoryLimit   string `json:"memory_limit"`
	GPUs          string `json:"gpus"`
	NodeSelector  string `json:"node_selector"`
}

var instanceTypeColumns = []string{"name", "default", "cpu_request", "cpu_limit", "memory_request", "memory_limit", "gpus", "node_selector"}

func newComputeInstanceTypeListCommand(g *cmdutil.Globals) *cobra.Command {
	var name, location string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the instance types of a kubernetes compute (-n) or location (--location)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(instanceTypeColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			if (name == "") == (location == "") {
				return nil, &core.Error{Code: core.EINVALID, Field: "name", Message: "name: give --name (a kubernetes compute) or --location (a kubernetes location), one of them"}
			}
			def := ""
			if name != "" {
				comp, err := c.GetCompute(ctx, ws, name)
				if err != nil {
					return nil, err
				}
				if comp.Type != compute.ComputeTypeKubernetes {
					return nil, &core.Error{Code: core.EINVALID, Field: "name", Message: fmt.Sprintf("name: compute %q is a %s; instance types belong to kubernetes computes", comp.Name, comp.Type)}
				}
				location, def = comp.Location, comp.InstanceType
			}
			loc, err := c.GetLocation(ctx, location)
			if err != nil {
				return nil, err
			}
			k := loc.Kubernetes
			if k == nil {
				return nil, &core.Error{Code: core.EINVALID, Field: "location", Message: fmt.Sprintf("location: %q is a %s location; instance types belong to kubernetes locations", loc.Name, loc.Provider)}
			}
			if def == "" {
				def = k.DefaultInstanceType
			}
			rows := []instanceTypeRow{}
			for _, it := range k.InstanceTypes {
				r, l := it.Resources.Requests, it.Resources.Limits
				gpus := l[catalog.ResourceGPU]
				if gpus == "" {
					gpus = r[catalog.ResourceGPU]
				}
				rows = append(rows, instanceTypeRow{Name: it.Name, Default: strings.EqualFold(it.Name, def),
					CPURequest: r[catalog.ResourceCPU], CPULimit: l[catalog.ResourceCPU],
					MemoryRequest: r[catalog.ResourceMemory], MemoryLimit: l[catalog.ResourceMemory],
					GPUs: gpus, NodeSelector: selectorString(it.NodeSelector)})
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
			return rows, nil
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "a kubernetes compute: its location's instance types, its own marked default")
	cmd.Flags().StringVarP(&location, "location", "l", "", "a kubernetes location")
	return cmd
}

func selectorString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

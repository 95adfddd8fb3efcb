package compute

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// computeFlags are the az ml compute create/update flags that map to keys of
// the compute document.
type computeFlags struct {
	file, name, typ, size, tier, location, description           string
	minInstances, maxInstances, idleTime                         string
	tags, sets                                                   []string
	sshEnabled, enableNodePublicIP                               bool
	sshKey, adminUser, adminPassword, identityType, vnet, subnet string
	userAssigned                                                 []string
	noWait                                                       bool
	// Compute instance flags.
	userObjectID, userTenantID, idleShutdown string
	enableSSO, stopped                       bool
}

// flagKeys maps a flag to the document key it sets.
var flagKeys = map[string]string{
	"name": "name", "type": "type", "size": "size", "tier": "tier", "location": "location",
	"description": "description", "min-instances": "min_instances", "max-instances": "max_instances",
	"idle-time-before-scale-down": "idle_time_before_scale_down",
	"ssh-public-access-enabled":   "ssh_public_access_enabled", "enable-node-public-ip": "enable_node_public_ip",
	"ssh-key-value": "ssh_settings.ssh_key_value", "admin-username": "ssh_settings.admin_username",
	"admin-password": "ssh_settings.admin_password", "identity-type": "identity.type",
	"vnet-name": "network_settings.vnet_name", "subnet": "network_settings.subnet",
	"user-object-id": "create_on_behalf_of.user_object_id", "user-tenant-id": "create_on_behalf_of.user_tenant_id",
	"idle-time-before-shutdown-minutes": "idle_time_before_shutdown_minutes", "enable-sso": "enable_sso",
	"stopped": "stopped",
	// compute attach (type: kubernetes)
	"resource-id": "resource_id", "namespace": "namespace", "instance-type": "instance_type",
}

func (f *computeFlags) register(fs *pflag.FlagSet, create bool) {
	fs.StringVarP(&f.name, "name", "n", "", "compute name")
	fs.StringVar(&f.minInstances, "min-instances", "", "minimum number of nodes")
	fs.StringVar(&f.maxInstances, "max-instances", "", "maximum number of nodes")
	fs.StringVar(&f.idleTime, "idle-time-before-scale-down", "", "seconds a node stays idle before it is released, or adaptive (chosen from recent arrivals)")
	fs.StringVar(&f.description, "description", "", "description")
	fs.StringArrayVar(&f.tags, "tags", nil, "space-separated tags: key1=value1 key2=value2")
	fs.StringArrayVar(&f.sets, "set", nil, "set a key of the document: --set max_instances=4 (repeatable)")
	fs.StringVar(&f.identityType, "identity-type", "", "managed identity: system_assigned, user_assigned, none")
	fs.StringSliceVar(&f.userAssigned, "user-assigned-identities", nil, "user-assigned identities (names or resource ids)")
	fs.BoolVar(&f.noWait, "no-wait", false, "do not wait for the operation to finish")
	fs.StringVar(&f.idleShutdown, "idle-time-before-shutdown-minutes", "", "instances: minutes idle before the instance stops itself (15 to 4320)")
	fs.StringVar(&f.sshKey, "ssh-key-value", "", "SSH public key, or @path to a key file (instances: may be set later on an SSH-enabled instance)")
	if !create {
		return
	}
	fs.StringVar(&f.userObjectID, "user-object-id", "", "instances: the user the instance is created for (create on behalf of)")
	fs.StringVar(&f.userTenantID, "user-tenant-id", "", "instances: the tenant of --user-object-id (kept for Azure compatibility)")
	fs.BoolVar(&f.enableSSO, "enable-sso", true, "instances: single sign-on to the instance's applications")
	fs.BoolVar(&f.stopped, "stopped", false, "instances: create the instance stopped")
	fs.StringVarP(&f.file, "file", "f", "", "YAML file with the compute definition")
	fs.StringVarP(&f.typ, "type", "t", "", "compute type: amlcompute or computeinstance")
	fs.StringVar(&f.size, "size", "", "VM size, e.g. Standard_DS3_v2")
	fs.StringVar(&f.tier, "tier", "", "dedicated or low_priority")
	fs.StringVarP(&f.location, "location", "l", "", "location (Azure region names work too)")
	fs.BoolVar(&f.sshEnabled, "ssh-public-access-enabled", false, "enable SSH access (fixed at creation)")
	fs.StringVar(&f.adminUser, "admin-username", "", "admin user name on the nodes")
	fs.StringVar(&f.adminPassword, "admin-password", "", "admin password on the nodes")
	fs.StringVar(&f.vnet, "vnet-name", "", "virtual network name")
	fs.StringVar(&f.subnet, "subnet", "", "subnet name or id")
	fs.BoolVar(&f.enableNodePublicIP, "enable-node-public-ip", true, "give nodes a public IP")
}

// apply writes the flags that were given into doc; --set comes last so it
// wins, as in az.
func (f *computeFlags) apply(cmd *cobra.Command, doc map[string]any, extraArgs []string) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		key, ok := flagKeys[fl.Name]
		if !ok || err != nil {
			return
		}
		var v any = fl.Value.String()
		switch fl.Name {
		case "idle-time-before-scale-down":
			// A number is a fixed timeout; "adaptive" (a Shoal extension)
			// keeps the number as the adaptive policy's fallback.
			delete(doc, "idle_policy")
			if strings.EqualFold(strings.TrimSpace(fl.Value.String()), compute.IdlePolicyAdaptive) {
				key, v = "idle_policy", compute.IdlePolicyAdaptive
				break
			}
			// wait_cost_per_hour belongs to the adaptive policy alone.
			delete(doc, "wait_cost_per_hour")
			v, err = cmdutil.IntFlag(fl.Name, fl.Value.String())
		case "min-instances", "max-instances", "idle-time-before-shutdown-minutes":
			v, err = cmdutil.IntFlag(fl.Name, fl.Value.String())
		case "enable-sso":
			v = f.enableSSO
		case "stopped":
			v = f.stopped
		case "ssh-public-access-enabled":
			v = f.sshEnabled
		case "enable-node-public-ip":
			v = f.enableNodePublicIP
		case "ssh-key-value":
			v, err = readKeyValue(f.sshKey)
		}
		if err == nil {
			err = applyValue(doc, key, v)
		}
	})
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("tags") {
		tags, err := cmdutil.ParseTags(append(append([]string{}, f.tags...), extraArgs...))
		if err != nil {
			return err
		}
		doc["tags"] = tags
	} else if len(extraArgs) > 0 {
		return fmt.Errorf("unexpected argument %q", extraArgs[0])
	}
	if cmd.Flags().Changed("user-assigned-identities") {
		var ids []any
		for _, id := range f.userAssigned {
			ids = append(ids, map[string]any{"resource_id": id})
		}
		if err := applyValue(doc, "identity.user_assigned_identities", ids); err != nil {
			return err
		}
	}
	for _, s := range f.sets {
		if err := cmdutil.ApplySet(doc, s); err != nil {
			return err
		}
	}
	return nil
}

// applyValue sets a dotted key in doc to v.
func applyValue(doc map[string]any, key string, v any) error {
	parts := strings.Split(key, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return nil
}

// readKeyValue reads an SSH key given inline, as @path, or as a path to an
// existing file (az accepts both).
func readKeyValue(v string) (string, error) {
	path := strings.TrimPrefix(v, "@")
	if strings.HasPrefix(v, "@") || (!strings.Contains(v, " ") && fileExists(path)) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("--ssh-key-value: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return v, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func newComputeCreateCommand(g *cmdutil.Globals) *cobra.Command {
	var f computeFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a compute from a YAML file and/or flags; applies the file to an existing compute when only mutable fields differ",
		Example: `  shoal compute create -f cluster.yml
  shoal compute create --name cpu-cluster --type AmlCompute --size Standard_DS3_v2 --min-instances 0 --max-instances 4`,
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
			return applyComputeDoc(cmd, g, doc, f.noWait)
		},
	}
	f.register(cmd.Flags(), true)
	return cmd
}

// waitProvisioned waits until the compute leaves Creating/Updating and
// returns it, showing its state on p; a Failed compute is an error
// carrying its provisioning errors.
func waitProvisioned(ctx context.Context, p *cmdutil.Progress, c *client.Client, ws string, comp *compute.Compute) (*compute.Compute, error) {
	name := comp.Name
	provisioning := func(c *compute.Compute) bool {
		return c.ProvisioningState == compute.ProvisioningCreating || c.ProvisioningState == compute.ProvisioningUpdating
	}
	err := cmdutil.PollUntil(ctx, p, func(ctx context.Context) (string, bool, error) {
		if !provisioning(comp) {
			return "", true, nil
		}
		next, err := c.GetCompute(ctx, ws, name)
		if err != nil {
			return "", false, err
		}
		comp = next
		return "provisioning state " + comp.ProvisioningState, !provisioning(comp), nil
	})
	if err != nil {
		return nil, err
	}
	if comp.ProvisioningState == compute.ProvisioningFailed {
		var msgs []string
		for _, e := range comp.ProvisioningErrors {
			msgs = append(msgs, e.Message)
		}
		return nil, fmt.Errorf("compute %q failed to provision: %s", name, strings.Join(msgs, "; "))
	}
	return comp, nil
}

func newComputeUpdateCommand(g *cmdutil.Globals) *cobra.Command {
	var f computeFlags
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Update a compute's mutable settings (clusters: min/max instances, idle time; instances: idle shutdown, SSH key; both: description, tags, identity)",
		Example: `  shoal compute update --name cpu-cluster --min-instances 0 --max-instances 8
  shoal compute update --name my-instance --idle-time-before-shutdown-minutes 30
  shoal compute update --name my-instance --ssh-key-value @~/.ssh/id_ed25519.pub`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.name == "" {
				return &core.Error{Code: core.EINVALID, Field: "name", Message: "--name: is required"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			cur, err := c.GetCompute(cmd.Context(), ws, f.name)
			if err != nil {
				return err
			}
			b, err := json.Marshal(cur.ComputeSpec)
			if err != nil {
				return err
			}
			doc := map[string]any{}
			if err := json.Unmarshal(b, &doc); err != nil {
				return err
			}
			if err := f.apply(cmd, doc, args); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			// The If-Match of the version read makes a concurrent change a
			// clear 412 instead of a silently lost update.
			comp, _, err := c.ApplyCompute(cmd.Context(), ws, cur.Name, raw, cur.ETag)
			if err != nil {
				return err
			}
			if f.noWait {
				return nil
			}
			return g.Render(comp, computeColumns)
		},
	}
	f.register(cmd.Flags(), false)
	return cmd
}

// applyComputeDoc creates (or applies) the compute document doc, waits
// for it unless noWait, and renders it.
func applyComputeDoc(cmd *cobra.Command, g *cmdutil.Globals, doc map[string]any, noWait bool) error {
	name, _ := doc["name"].(string)
	if name == "" {
		return &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required (give --name or a name: key in the file)"}
	}
	raw, err := cmdutil.ToJSON(doc)
	if err != nil {
		return err
	}
	c, ws, err := g.Client()
	if err != nil {
		return err
	}
	comp, _, err := c.ApplyCompute(cmd.Context(), ws, name, raw, "")
	if err != nil {
		return err
	}
	if noWait {
		return nil
	}
	p := g.NewProgress(cmd, "Creating compute "+comp.Name)
	comp, err = waitProvisioned(cmd.Context(), p, c, ws, comp)
	if err == nil && comp.Type == compute.ComputeTypeInstance {
		comp, err = waitInstance(cmd.Context(), p, c, ws, comp)
	}
	p.Done("")
	if err != nil {
		return err
	}
	if comp.Type == compute.ComputeTypeInstance {
		return g.Render(comp, instanceColumns)
	}
	return g.Render(comp, computeColumns)
}

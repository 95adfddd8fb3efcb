package compute

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// instanceColumns are the table columns of compute instances.
var instanceColumns = []string{"name", "size", "location", "state", "assigned_user", "provisioning_state"}

// instanceVerbs are the commands of compute instances: start, stop,
// restart, connect-ssh, enable-sso, postpone-shutdown and logs.
func instanceVerbs(g *cmdutil.Globals) []*cobra.Command {
	return []*cobra.Command{
		newInstanceOpCommand(g, "start", "Start a stopped compute instance", compute.InstanceRunning),
		newInstanceOpCommand(g, "stop", "Stop a compute instance: every process ends, its home is kept", compute.InstanceStopped),
		newInstanceOpCommand(g, "restart", "Restart a compute instance (also one whose setup failed)", compute.InstanceRunning),
		newConnectSSHCommand(g), newEnableSSOCommand(g), newPostponeShutdownCommand(g), newInstanceLogsCommand(g),
	}
}

func newInstanceOpCommand(g *cmdutil.Globals, op, short, want string) *cobra.Command {
	var name string
	var noWait bool
	cmd := &cobra.Command{
		Use:   op,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			comp, err := c.InstanceOperation(cmd.Context(), ws, name, op, "")
			if err != nil {
				return err
			}
			if noWait {
				return nil
			}
			p := g.NewProgress(cmd, instanceOpVerb(op)+" compute instance "+name)
			comp, err = waitInstance(cmd.Context(), p, c, ws, comp)
			p.Done("")
			if err != nil {
				return err
			}
			return g.Render(comp, instanceColumns)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute instance name")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the operation to finish")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// instanceOpVerb is how a wait names an instance operation: "Starting",
// "Stopping", "Restarting".
func instanceOpVerb(op string) string {
	if op == "stop" {
		return "Stopping"
	}
	return strings.ToUpper(op[:1]) + strings.TrimSuffix(op[1:], "e") + "ing"
}

// waitInstance waits until an instance's operation is over (its state is
// no longer a transitional one), showing its state on p, and fails when
// it failed.
func waitInstance(ctx context.Context, p *cmdutil.Progress, c *client.Client, ws string, comp *compute.Compute) (*compute.Compute, error) {
	name := comp.Name
	settled := func(comp *compute.Compute) bool {
		switch comp.State {
		case compute.InstanceRunning, compute.InstanceJobRunning, compute.InstanceStopped, compute.InstanceSetupFailed,
			compute.InstanceCreateFailed, compute.InstanceUnusable:
			return comp.LastOperation == nil || comp.LastOperation.OperationStatus != compute.OperationInProgress
		}
		return false
	}
	err := cmdutil.PollUntil(ctx, p, func(ctx context.Context) (string, bool, error) {
		if settled(comp) {
			return "", true, nil
		}
		next, err := c.GetCompute(ctx, ws, name)
		if err != nil {
			return "", false, err
		}
		comp = next
		return instanceState(comp), settled(comp), nil
	})
	if err != nil {
		return nil, err
	}
	return comp, instanceFailure(comp)
}

// instanceFailure is the error of an instance whose last operation
// failed, with why (its errors), or nil.
func instanceFailure(comp *compute.Compute) error {
	op := comp.LastOperation
	if op == nil || !strings.HasSuffix(op.OperationStatus, "Failed") {
		return nil
	}
	why := ""
	for _, e := range comp.Errors {
		why += ": " + e.Message
	}
	name := comp.Name
	return fmt.Errorf("%s of compute instance %q: %s (state %s)%s; see `shoal compute events -n %s` and `shoal compute logs -n %s --setup`",
		op.OperationName, name, op.OperationStatus, comp.State, why, name, name)
}

// instanceState is an instance's state as a wait shows it: "Starting
// (Start InProgress)".
func instanceState(comp *compute.Compute) string {
	s := "state " + comp.State
	if op := comp.LastOperation; op != nil && op.OperationName != "" {
		s += " (" + op.OperationName + " " + op.OperationStatus + ")"
	}
	return s
}

// newConnectSSHCommand runs the user's OpenSSH client against the
// instance, as `az ml compute connect-ssh` does.
func newConnectSSHCommand(g *cmdutil.Globals) *cobra.Command {
	var name, keyFile string
	cmd := &cobra.Command{
		Use:   "connect-ssh [-- ssh arguments]",
		Short: "Open an SSH session to a compute instance with your OpenSSH client",
		Example: `  shoal compute connect-ssh -n my-instance --private-key-file-path ~/.ssh/id_ed25519
  shoal compute connect-ssh -n my-instance -- -L 8888:127.0.0.1:8888`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			comp, err := c.GetCompute(cmd.Context(), ws, name)
			if err != nil {
				return err
			}
			known, err := pinHostKey(ws, comp)
			if err != nil {
				return err
			}
			argv, err := sshArgs(comp, keyFile, known, args)
			if err != nil {
				return err
			}
			bin, err := exec.LookPath("ssh")
			if err != nil {
				return fmt.Errorf("the OpenSSH client is not installed (apt-get install openssh-client); connect with: %s", comp.SSHConnectionString)
			}
			return syscall.Exec(bin, append([]string{"ssh"}, argv...), os.Environ())
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute instance name")
	cmd.Flags().StringVar(&keyFile, "private-key-file-path", "", "the private key to log in with")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// pinHostKey writes the instance's SSH host key, as the server knows it
// from the instance's agent, to a known_hosts file of its own (in the
// user's cache folder) and returns its path, so that ssh checks the key
// instead of asking (or failing without a terminal, "Host key
// verification failed"); "" when the server does not know the key yet.
func pinHostKey(ws string, comp *compute.Compute) (string, error) {
	if comp.SSHSettings == nil || comp.SSHSettings.HostKey == "" || comp.ConnectivityEndpoints == nil {
		return "", nil
	}
	return cmdutil.PinHostKey(ws+"-"+comp.Name, comp.ConnectivityEndpoints.PrivateIPAddress, comp.SSHSettings.SSHPort, comp.SSHSettings.HostKey)
}

// sshArgs is the OpenSSH command line of an instance; knownHosts, when
// set, is the known_hosts file with its host key pinned.
func sshArgs(comp *compute.Compute, keyFile, knownHosts string, extra []string) ([]string, error) {
	if comp.Type != compute.ComputeTypeInstance {
		return nil, fmt.Errorf("compute %q is a %s; connect-ssh is for compute instances", comp.Name, comp.Type)
	}
	if comp.SSHPublicAccessEnabled == nil || !*comp.SSHPublicAccessEnabled {
		return nil, fmt.Errorf("SSH is disabled on compute instance %q (it is fixed at creation: create an instance with --ssh-public-access-enabled)", comp.Name)
	}
	if comp.SSHSettings == nil || comp.SSHSettings.SSHPort == 0 || comp.ConnectivityEndpoints == nil {
		return nil, fmt.Errorf("compute instance %q is %s and not serving SSH; start it (shoal compute start -n %s)", comp.Name, comp.State, comp.Name)
	}
	args := []string{"-p", strconv.Itoa(comp.SSHSettings.SSHPort)}
	if knownHosts != "" {
		args = append(args, "-o", "UserKnownHostsFile="+knownHosts, "-o", "StrictHostKeyChecking=yes")
	}
	if keyFile != "" {
		args = append(args, "-i", keyFile)
	}
	args = append(args, extra...)
	args = append(args, compute.InstanceAdminUsername+"@"+comp.ConnectivityEndpoints.PrivateIPAddress)
	return args, nil
}

func newEnableSSOCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "enable-sso",
		Short: "Enable single sign-on on your compute instance (only its user may)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(instanceColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.InstanceOperation(ctx, ws, name, "enableSso", "")
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute instance name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newPostponeShutdownCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var minutes int
	cmd := &cobra.Command{
		Use:   "postpone-shutdown",
		Short: "Dismiss an upcoming idle shutdown of your compute instance",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(instanceColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			q := ""
			if minutes > 0 {
				q = "minutes=" + url.QueryEscape(strconv.Itoa(minutes))
			}
			return c.InstanceOperation(ctx, ws, name, "postponeShutdown", q)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute instance name")
	cmd.Flags().IntVar(&minutes, "minutes", 60, "no idle shutdown for this many minutes")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newInstanceLogsCommand(g *cmdutil.Globals) *cobra.Command {
	var name, app string
	var setup bool
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Show a compute instance's setup log (the output of its setup scripts), or a custom application's (--app)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !setup && app == "" {
				return &core.Error{Code: core.EINVALID, Field: "setup", Message: "--setup: name the log to show (instances keep their setup log, and --app NAME their custom applications')"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			var b []byte
			if app != "" {
				b, err = c.InstanceAppLog(cmd.Context(), ws, name, app)
			} else {
				b, err = c.InstanceLog(cmd.Context(), ws, name)
			}
			if err != nil {
				return err
			}
			out, done := g.LogOut()
			if _, err = out.Write(b); err != nil {
				return err
			}
			return done()
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute instance name")
	cmd.Flags().BoolVar(&setup, "setup", true, "the setup scripts' log")
	cmd.Flags().StringVar(&app, "app", "", "the log of this custom application instead (its output)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

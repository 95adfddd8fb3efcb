package job

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// newJobConnectSSHCommand is `shoal job connect-ssh`, Azure's `az ml job
// connect-ssh`: an SSH session into a running job whose services have an
// ssh service, with the user's OpenSSH client and the host key pinned.
func newJobConnectSSHCommand(g *cmdutil.Globals) *cobra.Command {
	var name, keyFile string
	var nodeIndex int
	cmd := &cobra.Command{
		Use:   "connect-ssh -n NAME [--node-index N] [-- ssh arguments]",
		Short: "Open an SSH session into a running job that has an ssh service, with your OpenSSH client",
		Example: `  shoal job connect-ssh -n my-job --private-key-file-path ~/.ssh/id_ed25519
  shoal job connect-ssh -n my-job --node-index 1 -- -L 6006:127.0.0.1:6006`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			j, err := c.GetJob(cmd.Context(), ws, name)
			if err != nil {
				return err
			}
			argv, err := jobSSHArgs(ws, j, nodeIndex, keyFile, args)
			if err != nil {
				return err
			}
			bin, err := exec.LookPath("ssh")
			if err != nil {
				return fmt.Errorf("the OpenSSH client is not installed (apt-get install openssh-client); connect with: ssh %s", shellJoin(argv))
			}
			return syscall.Exec(bin, append([]string{"ssh"}, argv...), os.Environ())
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "job name")
	cmd.Flags().IntVar(&nodeIndex, "node-index", 0, "the node to connect to (0: the first; its ssh service needs nodes: all for the others)")
	cmd.Flags().StringVar(&keyFile, "private-key-file-path", "", "the private key to log in with (one of the ssh service's ssh_public_keys)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// jobSSHArgs is the OpenSSH command line of job j's ssh service on node
// nodeIndex, with its host key pinned.
func jobSSHArgs(ws string, j *job.Job, nodeIndex int, keyFile string, extra []string) ([]string, error) {
	var svc string
	for _, n := range core.SortedKeys(j.Services) {
		if s := j.Services[n]; s != nil && s.Type == interactive.ServiceSSH {
			svc = n
			break
		}
	}
	if svc == "" {
		return nil, fmt.Errorf("job %q has no ssh service: submit it with services: {ssh: {type: ssh, ssh_public_keys: <your public key>}}", j.Name)
	}
	var in *interactive.ServiceNodeStatus
	for i := range j.Services[svc].Instances {
		if j.Services[svc].Instances[i].NodeIndex == nodeIndex {
			in = &j.Services[svc].Instances[i]
		}
	}
	switch {
	case in == nil:
		return nil, fmt.Errorf("job %q serves its ssh service %s on node 0 only, not on node %d (nodes: all serves it on every node)", j.Name, svc, nodeIndex)
	case in.Status == interactive.ServiceStatusFailed:
		return nil, fmt.Errorf("the ssh service %s of job %q failed on node %d: %s", svc, j.Name, nodeIndex, in.ErrorMessage)
	case in.Status != interactive.ServiceStatusRunning || in.Endpoint == "":
		return nil, fmt.Errorf("the ssh service %s of job %q is %s on node %d (the job is %s); it is reachable while the job runs", svc, j.Name, in.Status, nodeIndex, j.Status)
	}
	u, err := url.Parse(in.Endpoint)
	if err != nil || u.Scheme != "ssh" || u.User == nil {
		return nil, fmt.Errorf("the ssh service's endpoint %q is not an ssh://user@host:port URL", in.Endpoint)
	}
	host, p, err := net.SplitHostPort(u.Host)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		return nil, fmt.Errorf("the ssh service's endpoint %q has no port", in.Endpoint)
	}
	args := []string{"-p", p}
	if in.HostKey != "" {
		known, err := cmdutil.PinHostKey(fmt.Sprintf("%s-job-%s-%d", ws, j.Name, nodeIndex), host, port, in.HostKey)
		if err != nil {
			return nil, err
		}
		args = append(args, "-o", "UserKnownHostsFile="+known, "-o", "StrictHostKeyChecking=yes")
	}
	if keyFile != "" {
		args = append(args, "-i", keyFile)
	}
	// Extra arguments are OpenSSH's options (-L, -T), before the
	// destination, as compute connect-ssh takes them.
	args = append(args, extra...)
	return append(args, u.User.Username()+"@"+host), nil
}

// shellJoin is argv for a person to copy.
func shellJoin(argv []string) string {
	out := ""
	for i, a := range argv {
		if i > 0 {
			out += " "
		}
		out += strconv.Quote(a)
	}
	return out
}

package interactive

import "github.com/shoal-ml/shoal/domain/core"

// The live side of a job's services: what a node's agent reports of the
// services it serves for its rank, kept on the rank (RankStatus.Services)
// and shown on the job's services (ServiceNodeStatus).

// Job service instance statuses: a service is Starting until it listens,
// Running while the proxy may reach it, Failed (with why) when it cannot
// run (its program is missing from the job's environment), and Stopped
// once the job's attempt ended.
const (
	ServiceStatusStarting = "Starting"
	ServiceStatusRunning  = "Running"
	ServiceStatusFailed   = "Failed"
	ServiceStatusStopped  = "Stopped"
)

// ServiceInstance is one service of a job on one node, as the node's
// agent reports it: where it listens and whose process must hold the
// listener, for the application proxy to check at each dial.
type ServiceInstance struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Port is the port the service listens on in the rank's network.
	Port   int    `json:"port,omitempty"`
	Status string `json:"status"`
	// Error says why the service does not run (Failed).
	Error string `json:"error,omitempty"`
	// Addr is the host:port the proxy dials (in NetNSPID's network
	// namespace when that is set).
	Addr string `json:"addr,omitempty"`
	// ListenerOwner is whose process must hold the listener at Addr: the
	// rank's account, its container, the network namespace Addr is in.
	core.ListenerOwner
	// HostKey is an ssh service's host public key (authorized_keys
	// form), which `shoal job connect-ssh` pins.
	HostKey string `json:"host_key,omitempty"`
}

// ServiceNodeStatus is a service's state on one node of a shown job:
// Endpoint is the application proxy's URL for it (while it runs).
type ServiceNodeStatus struct {
	NodeIndex    int    `json:"node_index"`
	Status       string `json:"status"`
	Endpoint     string `json:"endpoint,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// HostKey is an ssh service's host public key.
	HostKey string `json:"host_key,omitempty"`
}

// ServesOnNode tells whether service s runs on node index i of a job:
// every node with nodes: all, else the first.
func (s *Service) ServesOnNode(i int) bool {
	return i == 0 || s.Nodes == "all"
}

// ServiceTypeREST is Azure's REST name of a job service type
// (jupyter_lab: JupyterLab), as azure-ai-ml reads it back.
func ServiceTypeREST(t string) string {
	switch t {
	case ServiceJupyterLab:
		return "JupyterLab"
	case ServiceSSH:
		return "SSH"
	case ServiceTensorBoard:
		return "TensorBoard"
	case ServiceVSCode:
		return "VSCode"
	case ServiceCustom:
		return "Custom"
	}
	return t
}

package computes

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
)

// instanceErrors is why an instance's last operation failed, while it
// stays failed (CreateFailed, SetupFailed, or Stopped by a start that
// failed): the reason instance.FailStart or the agent's setup kept, with
// the operation's status as its code. A start or restart asked since
// shows none: its own outcome will.
func instanceErrors(st *compute.InstanceStatus) []compute.ProvisioningError {
	if st.SetupError == "" || st.Pending != "" {
		return nil
	}
	code := ""
	if op := st.LastOperation; op != nil && strings.HasSuffix(op.OperationStatus, "Failed") {
		code = op.OperationStatus
	}
	switch st.State {
	case compute.InstanceCreateFailed, compute.InstanceSetupFailed:
		if code == "" {
			code = st.State
		}
	case compute.InstanceStopped:
		if code == "" {
			return nil
		}
	default:
		return nil
	}
	return []compute.ProvisioningError{{Code: code, Message: st.SetupError}}
}

package slurm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The --json output of squeue and sinfo changed shape across Slurm
// releases: a job's state is a string in 22.05 ("RUNNING") and a list in
// 23.02 and later (["RUNNING"]); numbers became {"set":..,"number":..}
// objects. The types below accept both.

// sqJob is one job of `squeue --json`.
type sqJob struct {
	ID     int       `json:"job_id"`
	Name   string    `json:"name"`
	State  flexState `json:"job_state"`
	Reason string    `json:"state_reason"`
}

// state is the job's main state ("RUNNING").
func (j *sqJob) state() string {
	if len(j.State) == 0 {
		return ""
	}
	return j.State[0]
}

// live reports whether the job still holds or waits for a node. A
// COMPLETING job is ending: its processes are being killed.
func (j *sqJob) live() bool {
	switch j.state() {
	case "PENDING", "CONFIGURING", "RUNNING", "RESIZING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT":
		return true
	}
	return false
}

// sinfoNode is one node of `sinfo --json`.
type sinfoNode struct {
	Name       string    `json:"name"`
	Address    string    `json:"address"`
	CPUs       flexInt   `json:"cpus"`
	RealMemory flexInt   `json:"real_memory"`
	State      flexState `json:"state"`
	StateFlags []string  `json:"state_flags"`
	Reason     string    `json:"reason"`
	Gres       string    `json:"gres"`
	Partitions []string  `json:"partitions"`
}

// unusable says why Slurm will not run pilots on the node, "" when it
// will.
func (n *sinfoNode) unusable() string {
	states := append([]string(nil), n.State...)
	states = append(states, n.StateFlags...)
	for _, s := range states {
		switch strings.ToUpper(s) {
		case "DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "NOT_RESPONDING", "FUTURE", "UNKNOWN", "INVALID_REG", "INVALID", "POWERED_DOWN", "POWER_DOWN", "POWERING_DOWN", "MAINTENANCE", "RESERVED":
			why := "Slurm: " + strings.ToLower(strings.Join(states, "+"))
			if n.Reason != "" {
				why += " (" + n.Reason + ")"
			}
			return why
		}
	}
	return ""
}

// flexState is a state written as a string or a list of strings.
type flexState []string

// UnmarshalJSON reads "RUNNING" or ["RUNNING", "COMPLETING"].
func (s *flexState) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(strings.ReplaceAll(one, "+", " "))
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("a state, as a string or a list of strings: %w", err)
	}
	*s = many
	return nil
}

// flexInt is a number written plainly or as {"set": true, "number": N}.
type flexInt int

// UnmarshalJSON reads 4 or {"set":true,"infinite":false,"number":4}.
func (n *flexInt) UnmarshalJSON(b []byte) error {
	var v int64
	if err := json.Unmarshal(b, &v); err == nil {
		*n = flexInt(v)
		return nil
	}
	var o struct {
		Set    bool  `json:"set"`
		Number int64 `json:"number"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("a number: %w", err)
	}
	*n = flexInt(o.Number)
	return nil
}

// parseSqueue reads `squeue --json`.
func parseSqueue(b []byte) ([]sqJob, error) {
	var doc struct {
		Jobs   []sqJob    `json:"jobs"`
		Errors []slurmErr `json:"errors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("squeue --json: %w (Slurm 21.08 or later is needed)", err)
	}
	if err := firstError(doc.Errors); err != nil {
		return nil, fmt.Errorf("squeue: %w", err)
	}
	return doc.Jobs, nil
}

// parseSinfo reads `sinfo --json`.
func parseSinfo(b []byte) ([]sinfoNode, error) {
	var doc struct {
		Nodes  []sinfoNode `json:"nodes"`
		Errors []slurmErr  `json:"errors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("sinfo --json: %w (Slurm 21.08 or later is needed)", err)
	}
	if err := firstError(doc.Errors); err != nil {
		return nil, fmt.Errorf("sinfo: %w", err)
	}
	return doc.Nodes, nil
}

// slurmErr is an entry of the "errors" list of Slurm's JSON output.
type slurmErr struct {
	Error       string `json:"error"`
	Description string `json:"description"`
	Number      int    `json:"error_number"`
}

func firstError(errs []slurmErr) error {
	for _, e := range errs {
		msg := strings.TrimSpace(e.Description + " " + e.Error)
		if msg == "" && e.Number == 0 {
			continue
		}
		return fmt.Errorf("%s (error %d)", msg, e.Number)
	}
	return nil
}

// gresGPUs counts the GPUs in a node's gres ("gpu:4", "gpu:a100:2(S:0-1)",
// "gpu:2,shard:8").
func gresGPUs(gres string) int {
	total := 0
	for _, item := range strings.Split(gres, ",") {
		item, _, _ = strings.Cut(item, "(")
		f := strings.Split(strings.TrimSpace(item), ":")
		if len(f) < 2 || f[0] != "gpu" {
			continue
		}
		if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
			total += n
		}
	}
	return total
}

// Package gpu asks NVIDIA's driver, through nvidia-smi, which GPUs a host
// has and how busy they are. CI machines have none: Parse is tested on
// nvidia-smi's output, and Query runs on a GPU host (scripts/gpu-check).
package gpu

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Device is one GPU.
type Device struct {
	Index       int
	UUID        string
	Name        string
	MemoryMiB   int
	Utilization int // percent, at the time of the query
}

// QueryFields are what Query asks nvidia-smi for, in order; Parse reads them.
const QueryFields = "index,uuid,name,memory.total,utilization.gpu"

// ErrNoDriver means the host has no NVIDIA driver (no nvidia-smi).
var ErrNoDriver = errors.New("nvidia-smi not found: this host has no NVIDIA driver")

// Query lists the host's GPUs with `nvidia-smi --query-gpu`, in its
// machine-readable CSV form (never the screen text).
func Query(ctx context.Context) ([]Device, error) {
	bin, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, ErrNoDriver
	}
	out, err := exec.CommandContext(ctx, bin, "--query-gpu="+QueryFields, "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	return Parse(string(out))
}

// Parse reads `nvidia-smi --query-gpu=index,uuid,name,memory.total,
// utilization.gpu --format=csv,noheader,nounits` output.
func Parse(out string) ([]Device, error) {
	r := csv.NewReader(strings.NewReader(out))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = 5
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi output: %w", err)
	}
	var devs []Device
	for _, rec := range recs {
		d := Device{UUID: rec[1], Name: rec[2]}
		if d.Index, err = strconv.Atoi(rec[0]); err != nil {
			return nil, fmt.Errorf("nvidia-smi output: index %q", rec[0])
		}
		if d.MemoryMiB, err = strconv.Atoi(rec[3]); err != nil {
			return nil, fmt.Errorf("nvidia-smi output: memory %q", rec[3])
		}
		// "[N/A]" on GPUs that do not report it.
		d.Utilization, _ = strconv.Atoi(rec[4])
		devs = append(devs, d)
	}
	return devs, nil
}

package money

import (
	"fmt"
	"strconv"

	"github.com/shoal-ml/shoal/domain/core"
)

// Default per-workspace limits: a rank's stored log, and the bytes of
// artifacts (uploaded code and inputs) and job outputs a workspace keeps.
const (
	DefaultMaxLogBytes       int64 = 100 << 20 // 100 MiB
	DefaultStorageQuotaBytes int64 = 10 << 30  // 10 GiB
	// maxLimitBytes bounds both settings (1 PiB), far past any disk.
	maxLimitBytes int64 = 1 << 50
)

// WorkspaceLimits are a workspace's bounds on what its jobs store; zero
// means the default. Administrators set them (`shoal workspace update`):
// they protect the server's disk, shared by every workspace.
type WorkspaceLimits struct {
	// MaxLogBytes caps one rank's stored log; what a job writes past it
	// is discarded, on the node and on the server, after one marker line.
	MaxLogBytes int64 `json:"max_log_bytes,omitempty"`
	// StorageQuotaBytes caps the workspace's artifacts, outputs and logs
	// (jobs' rank logs, instances' setup logs).
	StorageQuotaBytes int64 `json:"storage_quota_bytes,omitempty"`
}

// LogCap is the effective cap of a rank's log.
func (l WorkspaceLimits) LogCap() int64 {
	if l.MaxLogBytes > 0 {
		return l.MaxLogBytes
	}
	return DefaultMaxLogBytes
}

// StorageQuota is the effective storage quota.
func (l WorkspaceLimits) StorageQuota() int64 {
	if l.StorageQuotaBytes > 0 {
		return l.StorageQuotaBytes
	}
	return DefaultStorageQuotaBytes
}

// ValidateWorkspaceLimits checks limits: each 0 (the default) or from 1
// byte to 1 PiB.
func ValidateWorkspaceLimits(l WorkspaceLimits) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_log_bytes", l.MaxLogBytes}, {"storage_quota_bytes", l.StorageQuotaBytes}} {
		if f.v < 0 || f.v > maxLimitBytes {
			return core.FieldErrorf(f.name, "must be a number of bytes from 1 to %d (1 PiB), or 0 for the default; got %d", maxLimitBytes, f.v)
		}
	}
	return nil
}

// LogCutMarker is the line that ends a log cut at its cap. The node's
// agent and the server write the same bytes at the same offset (the
// cap), so whichever writes it, the stored log ends the same.
func LogCutMarker(limit int64) string {
	return fmt.Sprintf("\n[shoal: log cut at %s; the rest was discarded]\n", FormatBytes(limit))
}

// LogQuotaMarker is the line that ends a log cut because its
// workspace's storage quota was full. The server writes it once, where
// the cut fell; while it ends the log, later chunks are dropped, so the
// job runs on and its log stays cut.
func LogQuotaMarker(quota int64) string {
	return fmt.Sprintf("\n[shoal: log cut: the workspace's storage quota of %s is full; the rest was discarded]\n", FormatBytes(quota))
}

// FormatBytes writes n in the largest binary unit that divides it
// ("100 MiB", "10 GiB"), or in bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// WorkspaceLimitsView is a workspace's limits in force and its storage use.
type WorkspaceLimitsView struct {
	Workspace string `json:"workspace"`
	// MaxLogBytes and StorageQuotaBytes are the limits in force (the
	// defaults where none was set); Own says which were set.
	MaxLogBytes       int64           `json:"max_log_bytes"`
	StorageQuotaBytes int64           `json:"storage_quota_bytes"`
	StorageUsedBytes  int64           `json:"storage_used_bytes"`
	Own               WorkspaceLimits `json:"workspace_limits"`
}

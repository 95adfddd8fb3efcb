package compute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// scriptKeys are the keys of a setup script.
var scriptKeys = KeySchema{"path": nil, "command": nil, "timeout_minutes": nil}

// instanceKeys are the keys a compute instance document may carry: Azure's
// computeInstance schema, Shoal's few extensions and, ignored, the
// read-only keys `show` prints.
var instanceKeys = KeySchema{
	"$schema": nil, "name": nil, "type": nil, "description": nil, "tags": nil,
	"size": nil, "location": nil,
	"network_settings": KeySchema{"vnet_name": nil, "subnet": nil},
	"vnet_name":        nil, "subnet_name": nil,
	"create_on_behalf_of":       KeySchema{"user_tenant_id": nil, "user_object_id": nil},
	"ssh_public_access_enabled": nil,
	"ssh_settings":              KeySchema{"ssh_key_value": nil, "admin_username": nil, "ssh_port": nil, "host_key": nil},
	"identity": KeySchema{"type": nil, "principal_id": nil, "tenant_id": nil,
		"user_assigned_identities": listOf{KeySchema{"resource_id": nil, "principal_id": nil, "client_id": nil}}},
	"idle_time_before_shutdown_minutes": nil, "idle_time_before_shutdown": nil,
	"schedules": KeySchema{"compute_start_stop": listOf{KeySchema{
		"action": nil, "state": nil, "schedule_id": nil, "provisioning_state": nil, "type": nil,
		"trigger": triggerKeys,
	}}},
	"setup_scripts": KeySchema{"creation_script": scriptKeys, "startup_script": scriptKeys},
	"custom_applications": listOf{KeySchema{
		"name": nil, "type": nil, "image": KeySchema{"type": nil, "reference": nil}, "command": nil,
		"endpoints":             listOf{KeySchema{"name": nil, "protocol": nil, "target": nil, "published": nil}},
		"environment_variables": nil,
		"bind_mounts":           listOf{KeySchema{"source": nil, "target": nil, "type": nil, "read_only": nil}},
	}},
	"enable_node_public_ip": nil, "enable_sso": nil, "enable_root_access": nil,
	"release_quota_on_stop": nil, "enable_os_patching": nil, "image": nil,
	"idle_cpu_percent_below": nil, "max_concurrent_jobs": nil, "stopped": nil,
	// read-only keys, ignored on input
	"id": ReadOnly, "resource_id": ReadOnly, "etag": ReadOnly, "provisioning_state": ReadOnly, "provisioning_errors": ReadOnly,
	"created_on": ReadOnly, "modified_on": ReadOnly, "created_by": ReadOnly, "state": ReadOnly, "last_operation": ReadOnly, "errors": ReadOnly,
	"services": ReadOnly, "os_image_metadata": ReadOnly, "idle_state": ReadOnly, "applications": ReadOnly,
	"assigned_user": ReadOnly, "ssh_connection_string": ReadOnly, "connectivity_endpoints": ReadOnly,
	"allocation_state": ReadOnly, "allocation_state_transition_time": ReadOnly, "current_node_count": ReadOnly,
	"target_node_count": ReadOnly, "node_state_counts": ReadOnly,
}

// peekComputeType returns the `type` of a compute document, "" when absent
// or not a string (the strict decode reports that).
func peekComputeType(data []byte) string {
	var head struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return ""
	}
	var t string
	if json.Unmarshal(head.Type, &t) != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(t))
}

var isoMinutes = core.LazyRegexp(`^(?i)P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// normalizeInstanceDoc rewrites the lenient spellings of an instance
// document: the older `idle_time_before_shutdown: "PT30M"` becomes
// idle_time_before_shutdown_minutes, and minutes written as a string
// ("30", as the Python SDK's examples pass them) become a number.
func normalizeInstanceDoc(obj map[string]json.RawMessage) error {
	if v := NonNull(obj["idle_time_before_shutdown_minutes"]); v != nil {
		n, err := decodeMinutes(v)
		if err != nil {
			return core.FieldErrorf("idle_time_before_shutdown_minutes", "%s", err.Error())
		}
		obj["idle_time_before_shutdown_minutes"], _ = json.Marshal(n)
	}
	if v := NonNull(obj["idle_time_before_shutdown"]); v != nil {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return core.FieldErrorf("idle_time_before_shutdown", "must be an ISO 8601 duration such as \"PT30M\"")
		}
		n, err := isoDurationMinutes(s)
		if err != nil {
			return core.FieldErrorf("idle_time_before_shutdown", "%s", err.Error())
		}
		if m := NonNull(obj["idle_time_before_shutdown_minutes"]); m != nil {
			var have int
			if json.Unmarshal(m, &have) == nil && have != n {
				return core.FieldErrorf("idle_time_before_shutdown", "%q (%d minutes) disagrees with idle_time_before_shutdown_minutes: %d; give one of them", s, n, have)
			}
		}
		obj["idle_time_before_shutdown_minutes"], _ = json.Marshal(n)
	}
	delete(obj, "idle_time_before_shutdown")
	if v := NonNull(obj["max_concurrent_jobs"]); v != nil {
		n, err := CheckInteger("max_concurrent_jobs", v)
		if err != nil {
			return err
		}
		obj["max_concurrent_jobs"], _ = json.Marshal(*n)
	}
	return nil
}

// decodeMinutes reads a whole number of minutes given as a number or a
// string of digits.
func decodeMinutes(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		if f != math.Trunc(f) || math.Abs(f) > 1e6 {
			return 0, fmt.Errorf("must be a whole number of minutes, got %s", ShortJSON(raw))
		}
		return int(f), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > -1e6 && n < 1e6 {
			return n, nil
		}
		if n, err := isoDurationMinutes(s); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("must be a whole number of minutes (e.g. 30), got %s", ShortJSON(raw))
}

// isoDurationMinutes reads an ISO 8601 duration ("PT30M", "PT1H", "P3D")
// as whole minutes.
func isoDurationMinutes(s string) (int, error) {
	s = strings.TrimSpace(s)
	m := isoMinutes.FindStringSubmatch(s)
	if m == nil || strings.EqualFold(s, "P") || strings.EqualFold(s, "PT") {
		return 0, fmt.Errorf("must be an ISO 8601 duration such as \"PT30M\", got %q", s)
	}
	secs := 0
	for i, mult := range []int{86400, 3600, 60, 1} {
		if m[i+1] == "" {
			continue
		}
		v, err := strconv.Atoi(m[i+1])
		if err != nil || v > 1e6 {
			return 0, fmt.Errorf("duration %q is too large", s)
		}
		secs += v * mult
	}
	if secs%60 != 0 {
		return 0, fmt.Errorf("duration %q is not a whole number of minutes", s)
	}
	return secs / 60, nil
}

// isInstanceDoc reports whether a compute document is an instance's.
func isInstanceDoc(data []byte) bool {
	return peekComputeType(bytes.TrimSpace(data)) == ComputeTypeInstance
}

// jsonKey returns v's JSON encoding, to compare nested specs.
func jsonKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// DecodeIdleShutdown reads the body value of Azure's
// updateIdleShutdownSetting ({"idleTimeBeforeShutdown": "PT30M"}): an ISO
// 8601 duration, or a number of minutes; the result is checked against
// the 15–4320 minute bounds.
func DecodeIdleShutdown(raw json.RawMessage) (int, error) {
	if NonNull(raw) == nil {
		return 0, core.FieldErrorf("idleTimeBeforeShutdown", "is required: an ISO 8601 duration such as \"PT30M\"")
	}
	n, err := decodeMinutes(raw)
	if err != nil {
		return 0, core.FieldErrorf("idleTimeBeforeShutdown", "%s", err.Error())
	}
	if err := ValidateIdleShutdownMinutes(n); err != nil {
		return 0, err
	}
	return n, nil
}

// triggerKeys are the keys of a schedule trigger, wherever one sits (an
// instance's start/stop schedules, a cluster's scale windows).
var triggerKeys = KeySchema{"type": nil, "expression": nil, "start_time": nil, "end_time": nil, "time_zone": nil,
	"frequency": nil, "interval": nil,
	"schedule": KeySchema{"hours": nil, "minutes": nil, "week_days": nil, "month_days": nil}}

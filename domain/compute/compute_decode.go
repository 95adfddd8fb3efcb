package compute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// KeySchema lists the keys an object accepts: a nil value is a leaf, a
// keySchema value is a nested object, and a listOf value is a list of objects.
type KeySchema map[string]any

type listOf struct{ item KeySchema }

// readOnlyKey marks a key of `show` output that input accepts and ignores.
type readOnlyKey struct{}

// ReadOnly is the keySchema value of a read-only key.
var ReadOnly any = readOnlyKey{}

// clusterKeys are the keys a compute cluster document may carry. Read-only
// keys (`id`, `provisioning_state`, ...) are accepted and ignored so that the
// output of `show -o yaml` can be applied again.
var clusterKeys = KeySchema{
	"$schema": nil, "name": nil, "type": nil, "description": nil, "tags": nil,
	"size": nil, "location": nil, "tier": nil,
	"min_instances": nil, "max_instances": nil, "idle_time_before_scale_down": nil,
	"idle_policy": nil, "wait_cost_per_hour": nil, "tier_fallback": KeySchema{"after": nil},
	"ssh_public_access_enabled": nil,
	"ssh_settings":              KeySchema{"admin_username": nil, "admin_password": nil, "ssh_key_value": nil},
	"network_settings":          KeySchema{"vnet_name": nil, "subnet": nil},
	"vnet_name":                 nil, "subnet_name": nil, // the top-level spelling of the Python SDK
	"enable_node_public_ip": nil, "prepull_images": nil,
	"scale_windows": listOf{KeySchema{"name": nil, "trigger": triggerKeys, "min_instances": nil, "max_instances": nil}},
	"identity": KeySchema{"type": nil, "principal_id": nil, "tenant_id": nil,
		"user_assigned_identities": listOf{KeySchema{"resource_id": nil, "principal_id": nil, "client_id": nil}}},
	// read-only keys, ignored on input
	"id": ReadOnly, "resource_id": ReadOnly, "etag": ReadOnly, "provisioning_state": ReadOnly, "provisioning_errors": ReadOnly,
	"created_on": ReadOnly, "modified_on": ReadOnly, "created_by": ReadOnly, "allocation_state": ReadOnly,
	"allocation_state_transition_time": ReadOnly, "current_node_count": ReadOnly, "target_node_count": ReadOnly,
	"node_state_counts": ReadOnly, "serverless": ReadOnly, "scale_window": ReadOnly,
}

// kubernetesKeys are the keys of an attached Kubernetes compute (type:
// kubernetes): Azure's, Shoal's scale keys and instance_type, and the
// read-only keys `show -o yaml` prints (size, location and tier among
// them: the status derives them from resource_id and instance_type).
var kubernetesKeys = func() KeySchema {
	k := KeySchema{
		"$schema": nil, "name": nil, "type": nil, "description": nil, "tags": nil,
		"resource_id": nil, "namespace": nil, "instance_type": nil,
		"min_instances": nil, "max_instances": nil, "idle_time_before_scale_down": nil,
		"identity": clusterKeys["identity"],
		"size":     ReadOnly, "location": ReadOnly, "tier": ReadOnly,
	}
	for name, v := range clusterKeys {
		if v == ReadOnly && name != "resource_id" {
			k[name] = ReadOnly
		}
	}
	return k
}()

// CheckKeys fails on the first key that schema does not list, naming it with
// its full path.
func CheckKeys(raw json.RawMessage, path string, schema KeySchema) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		if path == "" {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return core.Errorf(core.EINVALID, "the document must be a mapping of keys to values, got %s", JSONValueName(te.Value))
			}
			return core.Errorf(core.EINVALID, "the document must be a mapping of keys to values (%s)", JSONProblem(err))
		}
		return core.FieldErrorf(path, "must be a mapping of keys to values")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		full := k
		if path != "" {
			full = path + "." + k
		}
		sub, ok := schema[k]
		if !ok {
			allowed := SchemaKeys(schema)
			return &core.Error{Code: core.EINVALID, Field: full, Message: fmt.Sprintf("%s: unknown key %q%s; allowed keys here: %s", full, k, core.DidYouMean(k, allowed), strings.Join(allowed, ", "))}
		}
		v := obj[k]
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			continue
		}
		switch s := sub.(type) {
		case KeySchema:
			if err := CheckKeys(v, full, s); err != nil {
				return err
			}
		case listOf:
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return core.FieldErrorf(full, "must be a list")
			}
			for i, it := range items {
				if err := CheckKeys(it, fmt.Sprintf("%s[%d]", full, i), s.item); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SchemaKeys lists the keys a document may set, sorted: read-only keys
// are accepted but left out, since listing them invites writing them.
func SchemaKeys(s KeySchema) []string {
	var out []string
	for k, v := range s {
		if v != ReadOnly {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// DecodeComputeSpec decodes a compute document (JSON with the snake_case
// YAML keys). Unknown keys, wrong types and malformed values are EINVALID
// errors naming the key. Spellings the seeds use are accepted: the top-level
// vnet_name/subnet_name, idle_time_before_scale_down as an ISO 8601 duration
// ("PT120S") and tag values that are numbers or booleans.
func DecodeComputeSpec(data []byte) (*ComputeSpec, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, core.Errorf(core.EINVALID, "the compute document is empty")
	}
	schema, instance := clusterKeys, isInstanceDoc(data)
	if instance {
		schema = instanceKeys
	} else if peekComputeType(data) == ComputeTypeKubernetes {
		schema = kubernetesKeys
	}
	if err := CheckKeys(data, "", schema); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, core.Errorf(core.EINVALID, "the document must be a mapping (%s)", JSONProblem(err))
	}
	if instance {
		if err := normalizeInstanceDoc(obj); err != nil {
			return nil, err
		}
	}
	// Read-only keys are dropped before the decode: `show -o yaml` prints
	// them (serverless, a cluster's own resource_id, a Kubernetes
	// compute's derived size), and applying that output again must
	// neither make a user's cluster a serverless pool nor set a field.
	for k, v := range schema {
		if v == ReadOnly {
			delete(obj, k)
		}
	}
	// Normalise the lenient spellings before the strict decode.
	if v, ok := obj["idle_time_before_scale_down"]; ok && strings.EqualFold(strings.Trim(string(bytes.TrimSpace(v)), `"`), IdlePolicyAdaptive) {
		// idle_time_before_scale_down: adaptive — the default number stays
		// the fallback.
		if p, ok := obj["idle_policy"]; ok && !strings.Contains(strings.ToLower(string(p)), IdlePolicyAdaptive) {
			return nil, core.FieldErrorf("idle_policy", "contradicts idle_time_before_scale_down: adaptive")
		}
		delete(obj, "idle_time_before_scale_down")
		obj["idle_policy"], _ = json.Marshal(IdlePolicyAdaptive)
	}
	if v, ok := obj["idle_time_before_scale_down"]; ok {
		n, err := DecodeSeconds(v)
		if err != nil {
			return nil, core.FieldErrorf("idle_time_before_scale_down", "%s", err.Error())
		}
		if n == nil {
			delete(obj, "idle_time_before_scale_down")
		} else {
			obj["idle_time_before_scale_down"], _ = json.Marshal(*n)
		}
	}
	if v, ok := obj["tags"]; ok {
		tags, err := core.DecodeTags(v)
		if err != nil {
			return nil, err
		}
		obj["tags"], _ = json.Marshal(tags)
	}
	for _, k := range []string{"min_instances", "max_instances"} {
		if v, ok := obj[k]; ok {
			n, err := CheckInteger(k, v)
			if err != nil {
				return nil, err
			}
			if n != nil {
				obj[k], _ = json.Marshal(*n) // 2.0 and 1e1 are whole numbers too
			}
		}
	}
	if err := normalizeScaleWindows(obj); err != nil {
		return nil, err
	}
	vnet, subnet := NonNull(obj["vnet_name"]), NonNull(obj["subnet_name"])
	delete(obj, "vnet_name")
	delete(obj, "subnet_name")
	norm, _ := json.Marshal(obj)

	var spec ComputeSpec
	dec := json.NewDecoder(bytes.NewReader(norm))
	if err := dec.Decode(&spec); err != nil {
		return nil, decodeError(err)
	}
	if vnet != nil || subnet != nil {
		var ns NetworkSettings
		if err := unmarshalString(vnet, &ns.VnetName, "vnet_name"); err != nil {
			return nil, err
		}
		if err := unmarshalString(subnet, &ns.Subnet, "subnet_name"); err != nil {
			return nil, err
		}
		if spec.NetworkSettings != nil {
			return nil, core.FieldErrorf("vnet_name", "give the virtual network either as network_settings or as top-level vnet_name/subnet_name, not both")
		}
		spec.NetworkSettings = &ns
	}
	return &spec, nil
}

// NonNull returns raw, or nil when it is absent or JSON null.
func NonNull(raw json.RawMessage) json.RawMessage {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}

func unmarshalString(raw json.RawMessage, dst *string, field string) error {
	if raw == nil || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return core.FieldErrorf(field, "must be a string")
	}
	return nil
}

// CheckInteger accepts a JSON number with no fractional part and returns
// it (nil for null).
func CheckInteger(field string, raw json.RawMessage) (*int, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, core.FieldErrorf(field, "must be a whole number, got %s", ShortJSON(raw))
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return nil, core.FieldErrorf(field, "must be a whole number, got %s", ShortJSON(raw))
	}
	n := int(f)
	return &n, nil
}

// MaxSeconds bounds a number of seconds in every spelling, so that it
// converts to a time.Duration without overflow.
const MaxSeconds = 1e9

var isoSeconds = core.LazyRegexp(`^(?i)PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$`)

// DecodeSeconds reads a number of seconds written as an integer, a string of
// digits or an ISO 8601 duration such as "PT2M" or "PT120S".
func DecodeSeconds(raw json.RawMessage) (*int, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		if f != math.Trunc(f) || math.Abs(f) > MaxSeconds {
			return nil, fmt.Errorf("must be a whole number of seconds, got %s", ShortJSON(raw))
		}
		n := int(f)
		return &n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("must be a whole number of seconds, got %s", ShortJSON(raw))
	}
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n > MaxSeconds || n < -MaxSeconds {
			return nil, fmt.Errorf("%q is too large", s)
		}
		return &n, nil
	}
	m := isoSeconds.FindStringSubmatch(s)
	if m == nil || s == "PT" || strings.EqualFold(s, "pt") {
		return nil, fmt.Errorf("must be a whole number of seconds (e.g. 120) or an ISO 8601 duration (e.g. PT120S), got %q", s)
	}
	total := 0
	for i, mult := range []int{3600, 60, 1} {
		if m[i+1] != "" {
			v, err := strconv.Atoi(m[i+1])
			if err != nil || v > 1e8 {
				return nil, fmt.Errorf("duration %q is too large", s)
			}
			total += v * mult
		}
	}
	if total > MaxSeconds {
		return nil, fmt.Errorf("duration %q is too large", s)
	}
	return &total, nil
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "document"
		}
		return core.FieldErrorf(field, "must be %s, got %s", jsonTypeName(te.Type.Kind().String()), te.Value)
	}
	return core.Errorf(core.EINVALID, "the document is not valid (%s)", JSONProblem(err))
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int64", "int32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "map", "struct":
		return "a mapping"
	case "slice":
		return "a list"
	case "ptr":
		return "a value of another type"
	}
	return "a " + kind
}

// JSONValueName names the kind of JSON value an UnmarshalTypeError reports.
func JSONValueName(v string) string {
	switch v {
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	}
	return v
}

// JSONProblem is encoding/json's complaint without its "json: " prefix,
// for a message that names the field itself.
func JSONProblem(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// ShortJSON quotes at most 40 bytes of a raw value in a message.
func ShortJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

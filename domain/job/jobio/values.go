package jobio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// Literal inputs and the JSON values a document's inputs and outputs are
// read from, shared with the rest of a job document's decoder (package
// job forwards to these).

// JSONKind returns the first byte of a JSON value: '"', '{', '[', 't', 'f',
// 'n', or a digit or '-' for a number; 0 for an absent value.
func JSONKind(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// String decodes a string; null or absent is "".
func String(raw json.RawMessage, field string) (string, error) {
	if compute.NonNull(raw) == nil {
		return "", nil
	}
	var s string
	if JSONKind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", core.FieldErrorf(field, "must be a string, got %s", compute.ShortJSON(raw))
	}
	return s, nil
}

// Text decodes a string, taking a number or a boolean as its text (YAML
// writes `version: 2` unquoted).
func Text(raw json.RawMessage, field string) (string, error) {
	switch k := JSONKind(raw); {
	case k == 't' || k == 'f' || k == '-' || (k >= '0' && k <= '9'):
		var v any
		if err := UnmarshalAny(raw, &v); err != nil {
			return "", core.FieldErrorf(field, "must be a string, got %s", compute.ShortJSON(raw))
		}
		if b, ok := v.(bool); ok {
			// A name, a description, a variable: the YAML text, as
			// written (an input's literal is FormatValue's).
			return strconv.FormatBool(b), nil
		}
		return FormatValue(v), nil
	}
	return String(raw, field)
}

// UnmarshalAny decodes raw keeping numbers as json.Number.
func UnmarshalAny(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// KeyPath joins a field and a user-chosen key, shortening a long key.
func KeyPath(field, key string) string {
	if len(key) > 64 {
		key = key[:64] + "..."
	}
	return field + "." + key
}

// ConvertLiteral turns the value of a typed literal input ({type:
// integer, default: 5}) into the literal stored in Input.Value, or
// checks an untyped literal when typ is "".
func ConvertLiteral(field, typ string, v any) (any, error) {
	switch typ {
	case "":
		switch x := v.(type) {
		case string, bool:
			return v, nil
		case json.Number:
			if !isJSONNumber(string(x)) {
				return nil, core.FieldErrorf(field, "%q is not a valid number", string(x))
			}
			return v, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, core.FieldErrorf(field, "must be a finite number")
			}
			return v, nil
		case float32:
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, core.FieldErrorf(field, "must be a finite number")
			}
			return v, nil
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			return v, nil
		case nil:
			return nil, core.FieldErrorf(field, "has no value")
		}
		return nil, core.FieldErrorf(field, "must be a number, string or boolean, not %T", v)
	case TypeString:
		switch v.(type) {
		case string:
			return v, nil
		case bool, json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			if _, err := ConvertLiteral(field, "", v); err != nil {
				return nil, err
			}
			return FormatValue(v), nil
		}
	case TypeInteger:
		s := ""
		switch x := v.(type) {
		case string:
			s = strings.TrimSpace(x)
		case json.Number:
			s = string(x)
		case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			s = fmt.Sprint(x)
		}
		if s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return json.Number(strconv.FormatInt(n, 10)), nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && isJSONNumber(s) && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return json.Number(strconv.FormatInt(int64(f), 10)), nil
			}
		}
		return nil, core.FieldErrorf(field, "must be a whole number for an integer input, got %s", shortValue(v))
	case TypeNumber:
		switch x := v.(type) {
		case string:
			if s := strings.TrimSpace(x); isJSONNumber(s) {
				return json.Number(s), nil
			}
		case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			return ConvertLiteral(field, "", v)
		}
		return nil, core.FieldErrorf(field, "must be a number for a number input, got %s", shortValue(v))
	case TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, core.FieldErrorf(field, "must be true or false for a boolean input, got %s", shortValue(v))
	}
	return nil, core.FieldErrorf(field, "must be a number, string or boolean, got %s", shortValue(v))
}

func shortValue(v any) string {
	if s, ok := v.(string); ok {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return strconv.Quote(s)
	}
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// isJSONNumber reports whether s is a number as JSON writes it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	start := i
	n := digits()
	if n == 0 || (n > 1 && s[start] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// FormatValue returns the text a literal input stands for in a
// command: a whole number without a fraction ("5", not "5.0"), other
// numbers as written (json.Number) or as fmt prints them, strings as is,
// and a boolean as Azure's Python writes one (str(False) is "False"):
// azure-ai-ml sends every literal input as str(value) and makes a
// string input's YAML boolean default str(default), so `default: False`
// of an input whose enum is ['True', 'False'] is "False", and a command
// gets --flag True where Azure's would.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		s := string(x)
		if s == "-0" {
			return "0"
		}
		if !strings.ContainsAny(s, ".eE") {
			return s // an integer of any size, exactly as written
		}
		// 5.0 and 1e3 are whole numbers; beyond 2^53 a float64 is not exact.
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return strconv.FormatFloat(f+0, 'f', -1, 64) // +0 turns -0 into 0
		}
		return s
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
	case float32:
		if f := float64(x); f == math.Trunc(f) && math.Abs(f) < 1e21 {
			return strconv.FormatFloat(f, 'f', -1, 32)
		}
	}
	return fmt.Sprint(v)
}

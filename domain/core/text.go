package core

import (
	"sort"
	"strings"
	"unicode"
)

// The character classes that names and free text are checked against,
// by every kind of resource alike (computes, jobs, sweeps, tokens,
// tracking); this file calls none of its callers.

// IsLowerRune reports an ASCII lower-case letter.
func IsLowerRune(r rune) bool { return r >= 'a' && r <= 'z' }

// IsUpperRune reports an ASCII upper-case letter.
func IsUpperRune(r rune) bool { return r >= 'A' && r <= 'Z' }

// IsDigitRune reports an ASCII digit.
func IsDigitRune(r rune) bool { return r >= '0' && r <= '9' }

// MaxDescriptionLength bounds a resource's description (a job's, an
// environment's, a component's), in bytes.
const MaxDescriptionLength = 5000

// NoControl refuses free text (a description, a display name) holding
// control characters or bidirectional overrides, naming field.
func NoControl(field, s string) error {
	if strings.ContainsFunc(s, IsUnprintable) {
		return FieldErrorf(field, "must not contain control characters nor bidirectional overrides")
	}
	return nil
}

// IsLetter reports an ASCII letter: names start with one (or a digit),
// as Azure's name rules say.
func IsLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// IsUnprintable reports the runes a reader's terminal or page acts on
// instead of showing: control characters, and the bidirectional controls
// (U+202E and the like) that make a text read otherwise than it is.
func IsUnprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// maxPathLength bounds a path a job names (code, an input's path).
const maxPathLength = 4096

// ValidatePath checks a path-like string: a local path, an artifact ID,
// an azureml: reference or a URI on one line.
func ValidatePath(field, p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return FieldErrorf(field, "must not be blank")
	case len(p) > maxPathLength:
		return FieldErrorf(field, "must be at most %d characters long", maxPathLength)
	case strings.ContainsFunc(p, unicode.IsControl):
		return FieldErrorf(field, "must be a path or URI on one line, without control characters")
	}
	return nil
}

// Short shortens a user value quoted in a message.
func Short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// SortedKeys returns m's keys in order, so that messages and decisions
// over a map do not depend on Go's random iteration order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

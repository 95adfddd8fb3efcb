package core

import (
	"sort"
	"strings"
	"unicode"
)

// The character classes that names and free text are checked against,
// by every kind of resource alike (computes, jobs, sweeps, tokens,
// tracking); this file calls none of its callers.

func IsLowerRune(r rune) bool { return r >= 'a' && r <= 'z' }

func IsUpperRune(r rune) bool { return r >= 'A' && r <= 'Z' }

func IsDigitRune(r rune) bool { return r >= '0' && r <= '9' }

const MaxJobDescriptionLength = 5000

func JobNoControl(field, s string) error {
	if strings.ContainsFunc(s, IsUnprintable) {
		return FieldErrorf(field, "must not contain control characters nor bidirectional overrides")
	}
	return nil
}

// isLetter reports an ASCII letter: names start with one (or a digit),
// as Azure's name rules say.
func IsLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// IsUnprintable reports the runes a reader's terminal or page acts on
// instead of showing: control characters, and the bidirectional controls
// (U+202E and the like) that make a text read otherwise than it is.
func IsUnprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// maxJobPathLength bounds a path a job names (code, an input's path).
const maxJobPathLength = 4096

// validateJobPath checks a path-like string: a local path, an artifact ID,
// an azureml: reference or a URI on one line.
func ValidateJobPath(field, p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return FieldErrorf(field, "must not be blank")
	case len(p) > maxJobPathLength:
		return FieldErrorf(field, "must be at most %d characters long", maxJobPathLength)
	case strings.ContainsFunc(p, unicode.IsControl):
		return FieldErrorf(field, "must be a path or URI on one line, without control characters")
	}
	return nil
}

// jobShort shortens a user value quoted in a message.
func JobShort(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

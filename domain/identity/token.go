package identity

import (
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// MaxTokenNameLength bounds an API token's name, in characters: names are
// printed in token lists and the audit log.
const MaxTokenNameLength = 64

// ValidateTokenName checks an API token's name: 1 to MaxTokenNameLength
// characters of valid UTF-8 with no control characters, so that a name
// cannot rewrite the terminal or the log lines it is printed in.
func ValidateTokenName(name string) error {
	if strings.TrimSpace(name) == "" {
		return core.FieldErrorf("name", "is required (e.g. laptop)")
	}
	if n := utf8.RuneCountInString(name); n > MaxTokenNameLength {
		return core.FieldErrorf("name", "is %d characters long; at most %d are allowed", n, MaxTokenNameLength)
	}
	if !utf8.ValidString(name) || strings.ContainsFunc(name, core.IsUnprintable) {
		return core.FieldErrorf("name", "must be printable text: no control characters (newlines, escapes) and valid UTF-8")
	}
	return nil
}

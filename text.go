package shoal

import "unicode"

// The character classes that names and free text are checked against,
// by every kind of resource alike (computes, jobs, sweeps, tokens,
// tracking); this file calls none of its callers.

// isLetter reports an ASCII letter: names start with one (or a digit),
// as Azure's name rules say.
func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// IsUnprintable reports the runes a reader's terminal or page acts on
// instead of showing: control characters, and the bidirectional controls
// (U+202E and the like) that make a text read otherwise than it is.
func IsUnprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

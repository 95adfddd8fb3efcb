package filestore

import (
	"regexp"
	"strings"
	"testing"
)

// safeName accepts exactly what the expression it replaced accepted.
func TestSafeNameIsTheExpression(t *testing.T) {
	want := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`)
	names := []string{"", "a", "A9", "9", "_a", ".a", "-a", "a_b.c-d", "a b", "a/b", "a\x00", "é", "a..b",
		strings.Repeat("a", 254), strings.Repeat("a", 255), strings.Repeat("a", 256), "a" + strings.Repeat("-", 254), "Z" + strings.Repeat(".", 255)}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}), string([]byte{byte(c)})+"a")
	}
	for _, n := range names {
		if got, w := safeName(n), want.MatchString(n); got != w {
			t.Errorf("safeName(%q) = %v, the expression says %v", n, got, w)
		}
	}
}

package blobs_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/blobs"
)

// Names that would reach outside their container, or read as another,
// are refused; ordinary paths are kept as written.
func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "LocalUpload/abc/src/main.py", "é/ü.txt", "a b/c", strings.Repeat("x", blobs.MaxNameBytes)} {
		if err := blobs.CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/../b", "a/..", "./a", "a/./b", "a//b", "/a", "a/", "a\\b", "a\x00b", "\xff", strings.Repeat("x", blobs.MaxNameBytes+1)} {
		if err := blobs.CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) accepted", bad)
		}
	}
}

package workspace

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// TestColumnHeaders holds this package's table columns to the headers
// they print: words people read, never a key split blindly ("V Cp Us",
// "Memory Gb"). cmdutil tests how headers are made.
func TestColumnHeaders(t *testing.T) {
	for _, tc := range []struct {
		columns []string
		want    string
	}{
		{costTableColumns, "Key|Node Hours|USD|Dedicated USD|Low-Priority USD"},
	} {
		var got []string
		for _, k := range tc.columns {
			got = append(got, cmdutil.HeaderName(k))
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("headers of %v:\n %s\nwant\n %s", tc.columns, g, tc.want)
		}
	}
}

package job

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
		{jobColumns, "Name|Display Name|Status|Compute|Attempt Count|Status Reason|Created On"},
		{attemptTableColumns, "Number|Status|Nodes|Start Time|End Time|Exit Code|Reason"},
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

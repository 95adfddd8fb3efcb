package job

import (
	"strings"
	"testing"
)

// TestJobUpdateFlags: --set takes description, display_name and
// tags.<name>; anything else, a --set without '=', a --remove of
// anything but a tag, or no change at all is refused naming the key.
func TestJobUpdateFlags(t *testing.T) {
	upd, err := jobUpdateOf([]string{"tags.team=ml", "description=a=b", "display_name=x"}, []string{"tags.old"})
	if err != nil || upd.SetTags["team"] != "ml" || *upd.Description != "a=b" || *upd.DisplayName != "x" || upd.RemoveTags[0] != "old" {
		t.Fatalf("jobUpdateOf = %+v, %v", upd, err)
	}
	for _, c := range []struct {
		sets, removes []string
		want          string
	}{
		{[]string{"command=rm -rf /"}, nil, "command"},
		{[]string{"compute=gpu"}, nil, "compute"},
		{[]string{"tags.=x"}, nil, "tags."},
		{[]string{"description"}, nil, "KEY=VALUE"},
		{nil, []string{"description"}, "description"},
		{nil, nil, "nothing to update"},
	} {
		if _, err := jobUpdateOf(c.sets, c.removes); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("jobUpdateOf(%q, %q) = %v, want an error naming %s", c.sets, c.removes, err, c.want)
		}
	}
}

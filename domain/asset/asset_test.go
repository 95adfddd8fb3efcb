package asset_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job"
)

// TestNextAssetVersion: the next version is one more than the largest
// integer version, archived ones included; other versions do not count;
// 1 for none. Every kind numbers alike.
func TestNextAssetVersion(t *testing.T) {
	v := func(vs ...string) []*asset.Environment {
		var out []*asset.Environment
		for i, s := range vs {
			out = append(out, &asset.Environment{Version: s, Archived: i%2 == 0})
		}
		return out
	}
	for want, list := range map[string][]*asset.Environment{"1": nil, "2": v("1"), "8": v("7", "2", "beta")} {
		if got := asset.NextAssetVersion(list); got != want {
			t.Errorf("%v: %s, want %s", list, got, want)
		}
	}
	if got := asset.NextAssetVersion(v("beta", "1.5", "10", "9")); got != "11" {
		t.Errorf("got %s, want 11", got)
	}
	if got := asset.NextAssetVersion([]*job.Component{{Version: "3"}, {Version: "beta"}, {Version: "10"}}); got != "11" {
		t.Errorf("components: next = %s, want 11", got)
	}
	if k := asset.KindOf[*job.Component](); k != asset.AssetComponent {
		t.Errorf("KindOf component = %q", k)
	}
}

package job

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

func TestUnknownKeysSuggestTheClosestAndListOnlyWritableKeys(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		decode          func([]byte) error
	}{
		{"cluster", `{"name": "c", "sise": "Standard_D2_v3"}`, `did you mean "size"?`, func(b []byte) error { _, err := compute.DecodeComputeSpec(b); return err }},
		{"cluster nested", `{"name": "c", "tier_fallback": {"afer": "5m"}}`, `did you mean "after"?`, func(b []byte) error { _, err := compute.DecodeComputeSpec(b); return err }},
		{"instance", `{"name": "i", "type": "computeinstance", "enable_ssoo": true}`, `did you mean "enable_sso"?`, func(b []byte) error { _, err := compute.DecodeComputeSpec(b); return err }},
		{"job", `{"comand": "echo"}`, `did you mean "command"?`, func(b []byte) error { _, err := DecodeJobSpec(b); return err }},
		{"component", `{"name": "c", "version": "1", "comand": "echo"}`, `did you mean "command"?`, func(b []byte) error { _, err := DecodeComponent(b); return err }},
	} {
		err := tc.decode([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want it to say %s", tc.name, err, tc.want)
			continue
		}
		// Read-only keys are ignored on input: listing them as allowed
		// invites writing them.
		for _, ro := range []string{"provisioning_state", "created_on", "etag", "creation_context"} {
			if strings.Contains(err.Error(), ro) {
				t.Errorf("%s: the allowed keys list the read-only key %s: %v", tc.name, ro, err)
			}
		}
	}
	// Far from every key: no suggestion.
	if _, err := compute.DecodeComputeSpec([]byte(`{"name": "c", "zzzzzz": 1}`)); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("a key far from every key got a suggestion: %v", err)
	}
	// Read-only keys are still accepted, so that show -o yaml applies again.
	if _, err := compute.DecodeComputeSpec([]byte(`{"name": "c", "provisioning_state": "Succeeded", "etag": "x"}`)); err != nil {
		t.Errorf("read-only keys refused: %v", err)
	}
}

func TestUnknownSizeSuggestsTheClosest(t *testing.T) {
	loc := &catalog.Location{Name: "local"}
	cat, err := catalog.NewCatalog([]*catalog.Location{loc}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	for want, typo := range map[string]string{
		`did you mean "Standard_D2_v3"?`:  "Standard_D2v3",
		`did you mean "Standard_DS3_v2"?`: "DS3_v2",
	} {
		_, err := cat.CheckSize(typo, compute.ComputeTypeCluster, loc)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("size %s: got %v, want it to say %s", typo, err, want)
		}
	}
	if _, err := cat.CheckSize("Zzzzzzzzzzzz", compute.ComputeTypeCluster, loc); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("a size far from every size got a suggestion: %v", err)
	}
}

func TestDidYouMeanNeedsACloseName(t *testing.T) {
	names := []string{"id", "tag", "size", "type"}
	for want, in := range map[string]string{"": "foo", ` (did you mean "type"?)`: "tpye", ` (did you mean "size"?)`: "SIZE "} {
		if got := core.DidYouMean(strings.TrimSpace(in), names); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

package compute

import (
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	names := []string{"Standard_D16_v3", "Standard_D2_v3", "Standard_DS11_v2", "Standard_D4_v3", "Standard_DS2_v2", "Standard_D2_v3", "Standard_D02_v3", "a10", "a9", "a", "Standard_NC24ads_A100_v4", "Standard_NC6s_v3", "x99999999999999999999999", "x100000000000000000000000"}
	slices.SortFunc(names, naturalCompare)
	want := []string{"Standard_D02_v3", "Standard_D2_v3", "Standard_D2_v3", "Standard_D4_v3", "Standard_D16_v3", "Standard_DS2_v2", "Standard_DS11_v2", "Standard_NC6s_v3", "Standard_NC24ads_A100_v4", "a", "a9", "a10", "x99999999999999999999999", "x100000000000000000000000"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted:\n%v\nwant\n%v", names, want)
	}
	if naturalCompare("D2", "D02") == 0 || naturalCompare("D2", "D02") != -naturalCompare("D02", "D2") {
		t.Errorf("D2 and D02 compare %d and %d; want a total, antisymmetric order", naturalCompare("D2", "D02"), naturalCompare("D02", "D2"))
	}
}

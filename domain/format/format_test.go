package format_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/format"
)

// One rule for every figure printed: the 777.2485714999999 %,
// 0.00 of 0.001 USD and 17-digit metrics read as people expect.
func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{format.Percent(777.2485714999999), "777.2 %"},
		{format.Percent(50), "50 %"},
		{format.Percent(0.04), "0 %"},
		{format.Percent(99.96), "100 %"},
		{format.USD(0.0004123), "0.0004123"},
		{format.USD(0.001), "0.001"},
		{format.USD(0.00070001), "0.0007"},
		{format.USD(0.016480998), "0.02"},
		{format.USD(30.6), "30.60"},
		{format.USD(0), "0.00"},
		{format.Number(0.30000000000000004), "0.3"},
		{format.Number(0.12345678912345678), "0.123457"},
		{format.Number(1234567.891), "1234568"},
		{format.Number(12.5), "12.5"},
		{format.Number(3), "3"},
		{format.Number(-0.000123456789), "-0.000123457"},
		{format.Number(1.5e-9), "1.5e-09"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

package studio

import "testing"

// The studio prints figures by the CLI's rule: money to the cent, a
// fraction of a cent with its digits (a short job's $0.0000163, not
// $0.0000), metrics and node-seconds without float noise (0.3, not
// 0.30000000000000004; a 0.2 s job's 0.2 node-seconds, not 0).
func TestFigures(t *testing.T) {
	money := funcs["money"].(func(float64) string)
	num := funcs["num"].(func(float64) string)
	for _, tt := range []struct{ got, want string }{
		{money(0.293), "$0.29"},
		{money(0.0000163), "$0.0000163"},
		{money(12), "$12.00"},
		{num(0.30000000000000004), "0.3"},
		{num(0.2), "0.2"},
		{num(1234567.891), "1234568"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

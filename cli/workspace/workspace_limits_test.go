package workspace

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100MiB": 100 << 20, "10 GiB": 10 << 30, "512kib": 512 << 10, "4096": 4096, "0": 0, "7B": 7} {
		if got, err := parseSize("x", in); err != nil || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "ten", "1.5GiB", "99999999999TiB", "1PB"} {
		if _, err := parseSize("max-log-bytes", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

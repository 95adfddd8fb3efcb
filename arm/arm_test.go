package arm

import (
	"strings"
	"testing"
	"time"
)

func TestAPIVersion(t *testing.T) {
	// What the two SDKs send (Go v4.0.0; azure-ai-ml 1.4's compute and
	// usage clients), what az ml 2.x sends, and the newest published.
	for _, v := range []string{"2024-04-01", "2022-10-01-preview", "2022-05-01", "2023-02-01-preview", "2021-07-01", "2025-01-01-preview", "2026-05-01"} {
		if err := CheckAPIVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	// Before 2021, never published (a date with no specification, an
	// impossible date, a future one), or not a version at all.
	for _, v := range []string{"", "2019-01-01", "2024-13-01", "2023-02-30-preview", "2099-12-31", "2024-05-01", "latest", "2024-04-01-beta", " 2024-04-01"} {
		if err := CheckAPIVersion(v); err == nil {
			t.Errorf("%q accepted", v)
		} else if status, code := azureCode(err); status != 400 || code != "InvalidApiVersionParameter" {
			t.Errorf("%q: %d %s", v, status, code)
		}
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"PT120S": 2 * time.Minute, "PT2M": 2 * time.Minute, "P1DT2H": 26 * time.Hour, "PT0.5S": 500 * time.Millisecond} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "120", "PT2X"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Durations past what a time.Duration (or a sane setting) holds are
	// refused, not wrapped: PT2251799813685249H used to be stored as 3600 s.
	for _, big := range []string{"PT2251799813685249H", "P106751991167301D", "PT9223372036854775807S", "PT99999999999999999999M", "PT1" + strings.Repeat("0", 400) + ".5S", "P20000DT1H"} {
		if d, err := parseDuration(big); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("%.40q = %v, %v; want a too-large error", big, d, err)
		}
	}
}

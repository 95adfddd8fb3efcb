package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/core"
)

func TestLoadLocation(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"", "UTC"},
		{"UTC", "Etc/UTC"},
		{"utc", "Etc/UTC"},
		{"Pacific Standard Time", "America/Los_Angeles"},
		{"pacific standard time", "America/Los_Angeles"},
		{"  PACIFIC STANDARD TIME ", "America/Los_Angeles"},
		{"India Standard Time", "Asia/Kolkata"},
		{"GMT Standard Time", "Europe/London"},
		{"W. Europe Standard Time", "Europe/Berlin"},
		{"Eastern Standard Time", "America/New_York"},
		{"Central Standard Time", "America/Chicago"},
		{"Mountain Standard Time", "America/Denver"},
		{"Tokyo Standard Time", "Asia/Tokyo"},
		{"China Standard Time", "Asia/Shanghai"},
		{"AUS Eastern Standard Time", "Australia/Sydney"},
		{"aus eastern standard time", "Australia/Sydney"},
		{"Pacific Standard Time (Mexico)", "America/Tijuana"},
		{"UTC-11", "Etc/GMT+11"},
		{"America/Los_Angeles", "America/Los_Angeles"},
		{"america/los_angeles", "America/Los_Angeles"},
		{"ASIA/KOLKATA", "Asia/Kolkata"},
		{"america/argentina/buenos_aires", "America/Argentina/Buenos_Aires"},
		{"america/port-au-prince", "America/Port-au-Prince"}, // in the table
		{"Europe/Paris", "Europe/Paris"},
	} {
		loc, err := schedule.LoadLocation(c.name)
		if err != nil {
			t.Errorf("LoadLocation(%q): %v", c.name, err)
			continue
		}
		if loc.String() != c.want {
			t.Errorf("LoadLocation(%q) = %s, want %s", c.name, loc, c.want)
		}
	}
}

func TestLoadLocationUnknown(t *testing.T) {
	for _, name := range []string{"Mars Standard Time", "Pacific/Nowhere", "Local", "local", "../etc/passwd", "/etc/localtime", "PST8"} {
		_, err := schedule.LoadLocation(name)
		if err == nil {
			t.Errorf("LoadLocation(%q) succeeded", name)
			continue
		}
		msg := core.ErrorMessage(err)
		if core.ErrorCode(err) != core.EINVALID || !strings.Contains(msg, name) || !strings.Contains(msg, "Windows") || !strings.Contains(msg, "IANA") {
			t.Errorf("LoadLocation(%q): %v: want EINVALID naming the value and both kinds of name", name, err)
		}
	}
}

// TestWindowsZonesLoad checks the whole CLDR "001" table against the zone
// database (the embedded one where the machine lacks a zone).
func TestWindowsZonesLoad(t *testing.T) {
	zones := schedule.WindowsZones()
	if len(zones) < 135 {
		t.Errorf("the table has %d Windows zones, want CLDR's ~140", len(zones))
	}
	for win, iana := range zones {
		loc, err := schedule.LoadLocation(win)
		if err != nil {
			t.Errorf("%s → %s: %v", win, iana, err)
			continue
		}
		if loc.String() != iana {
			t.Errorf("%s: loaded %s, want %s", win, loc, iana)
		}
	}
}

// TestLoadLocationFollowsDST: a Windows "Standard Time" label still means
// the zone's clocks, daylight saving included.
func TestLoadLocationFollowsDST(t *testing.T) {
	for _, c := range []struct {
		name         string
		winter, summ int // hours east of UTC in January and July 2026
	}{
		{"Pacific Standard Time", -8, -7},
		{"GMT Standard Time", 0, 1},
		{"AUS Eastern Standard Time", 11, 10},
		{"India Standard Time", 5, 5}, // +05:30, no DST
	} {
		loc, err := schedule.LoadLocation(c.name)
		if err != nil {
			t.Fatal(err)
		}
		_, w := utc(2026, time.January, 15, 12, 0).In(loc).Zone()
		_, s := utc(2026, time.July, 15, 12, 0).In(loc).Zone()
		if w/3600 != c.winter || s/3600 != c.summ {
			t.Errorf("%s: offsets %ds and %ds, want %dh and %dh", c.name, w, s, c.winter, c.summ)
		}
	}
}

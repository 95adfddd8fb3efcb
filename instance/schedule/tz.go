package schedule

import (
	"strings"
	"time"
	// The zone database is embedded so that schedules work on machines
	// without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/shoal-ml/shoal"
)

// LoadLocation resolves a schedule's time zone: a Windows name as Azure
// writes it ("Pacific Standard Time", "India Standard Time") or an IANA
// name ("America/Los_Angeles"), case-insensitively; "" is UTC. The zone
// follows daylight saving time — unlike Azure, whose labels ignore it.
func LoadLocation(name string) (*time.Location, error) {
	n := strings.TrimSpace(name)
	if n == "" || strings.EqualFold(n, "UTC") {
		return time.UTC, nil
	}
	if iana, ok := windowsZones[strings.ToLower(n)]; ok {
		return time.LoadLocation(iana)
	}
	if loc, err := time.LoadLocation(n); err == nil {
		return loc, nil
	}
	// IANA names are case-sensitive; accept any case.
	for _, iana := range windowsZones {
		if strings.EqualFold(iana, n) {
			return time.LoadLocation(iana)
		}
	}
	return nil, shoal.Errorf(shoal.EINVALID, "unknown time zone %q: give a Windows time-zone name (e.g. \"Pacific Standard Time\") or an IANA name (e.g. \"America/Los_Angeles\")", name)
}

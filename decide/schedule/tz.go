package schedule

import (
	"strings"
	"time"

	// The zone database is embedded so that schedules evaluate the same on
	// machines without /usr/share/zoneinfo (minimal containers).
	_ "time/tzdata"

	"github.com/shoal-ml/shoal/domain/core"
)

// LoadLocation resolves a schedule's time zone, case-insensitively: a
// Windows time-zone ID as Azure writes it ("Pacific Standard Time", "India
// Standard Time", "UTC"), mapped to the IANA zone of its primary territory,
// or an IANA name ("America/Los_Angeles"). "" is UTC. The zone follows
// daylight saving time through the IANA rules: "Pacific Standard Time"
// means Pacific time, PDT in summer, whatever the label says. An unknown
// name is an EINVALID *shoal.Error that names the value.
func LoadLocation(name string) (*time.Location, error) {
	n := strings.TrimSpace(name)
	if n == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(n, "local") {
		// time.LoadLocation("Local") is the server's own zone, which would
		// make a schedule mean different times on different machines.
		return nil, unknownZone(name)
	}
	if iana, ok := byLowerWindows[strings.ToLower(n)]; ok {
		if loc, err := time.LoadLocation(iana); err == nil {
			return loc, nil
		}
		return nil, unknownZone(name)
	}
	// IANA names are case-sensitive file names; try the spelling given,
	// the table's spelling, and the usual capitalisation of each word.
	for _, cand := range []string{n, byLowerIANA[strings.ToLower(n)], capitalizeIANA(n), strings.ToUpper(n)} {
		if cand == "" {
			continue
		}
		if loc, err := time.LoadLocation(cand); err == nil {
			return loc, nil
		}
	}
	return nil, unknownZone(name)
}

func unknownZone(name string) error {
	return core.Errorf(core.EINVALID, "unknown time zone %q: give a Windows time-zone name (such as \"Pacific Standard Time\") or an IANA name (such as \"America/Los_Angeles\")", name)
}

// capitalizeIANA writes "america/new_york" as "America/New_York": each
// word of an IANA name starts with a capital, the rest in lower case.
// Names that break the pattern ("America/Port-au-Prince") are found when
// spelled exactly or through the Windows table.
func capitalizeIANA(n string) string {
	b := []byte(strings.ToLower(n))
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

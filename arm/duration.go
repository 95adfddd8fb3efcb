package arm

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var isoDurationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// parseDuration reads an ISO 8601 duration of days, hours, minutes and
// seconds ("PT120S", "PT2M", "P1DT2H").
func parseDuration(s string) (time.Duration, error) {
	m := isoDurationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT120S or PT2M", s)
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute} {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			d += time.Duration(n) * unit
		}
	}
	if m[4] != "" {
		f, _ := strconv.ParseFloat(m[4], 64)
		d += time.Duration(f * float64(time.Second))
	}
	return d, nil
}

// formatSeconds writes seconds as Azure does ("PT120S").
func formatSeconds(s int) string { return "PT" + strconv.Itoa(s) + "S" }

package armcore

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var isoDurationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// maxDuration bounds every duration read from a request: 10^9 seconds
// (about 31 years), the bound the YAML spellings use, far past any real
// setting and far below where a time.Duration or an int of seconds wraps.
const maxDuration = 1e9 * time.Second

// ParseDuration reads an ISO 8601 duration of days, hours, minutes and
// seconds ("PT120S", "PT2M", "P1DT2H"). A duration over maxDuration is
// refused: multiplying it out would wrap (PT2251799813685249H became 1 h).
func ParseDuration(s string) (time.Duration, error) {
	m := isoDurationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT120S or PT2M", s)
	}
	tooLarge := fmt.Errorf("%.40q is too large: at most %d seconds", s, int64(maxDuration/time.Second))
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute} {
		if m[i+1] == "" {
			continue
		}
		// Checked before multiplying, and the sum after each step, so no
		// step can overflow an int64 of nanoseconds.
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if err != nil || n > int64(maxDuration/unit) {
			return 0, tooLarge
		}
		if d += time.Duration(n) * unit; d > maxDuration {
			return 0, tooLarge
		}
	}
	if m[4] != "" {
		f, err := strconv.ParseFloat(m[4], 64)
		if err != nil || f > float64(maxDuration/time.Second) {
			return 0, tooLarge
		}
		if d += time.Duration(f * float64(time.Second)); d > maxDuration {
			return 0, tooLarge
		}
	}
	return d, nil
}

// FormatSeconds writes seconds as Azure does ("PT120S").
func FormatSeconds(s int) string { return "PT" + strconv.Itoa(s) + "S" }

package armcore

import "testing"

// FuzzParseDuration: any string is a duration in range or an error, never
// a value that wrapped around (PT2251799813685249H once read as 1 h).
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT120S", "P1DT2H", "PT0.5S", "PT2251799813685249H", "P106751991167301D", "PT9223372036854775807S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && (d < 0 || d > maxDuration) {
			t.Fatalf("%q = %v: out of range", s, d)
		}
	})
}

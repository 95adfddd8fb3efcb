// Package format is the one rule for how numbers read to people: money,
// percentages and measured values (metrics, hours), in the
// CLI's tables, the studio and the reasons events and jobs give. The API
// and JSON keep full precision; only what is printed for reading is
// rounded, the same way everywhere.
package format

import (
	"math"
	"strconv"
	"strings"
)

// USD formats an amount of money: to the cent, except an amount under half
// a cent, which would read 0.00, with four significant digits instead, so
// that a short run or a small budget does not look free (0.0001648, not
// 0.00; 0.001 of a 0.001 limit).
func USD(f float64) string {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 0.005 {
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(f))))
	return trimZeros(strconv.FormatFloat(f, 'f', decimals, 64))
}

// Percent formats a percentage with one decimal and its sign: "777.2 %",
// "50 %" for a whole number.
func Percent(p float64) string {
	return trimZeros(strconv.FormatFloat(p, 'f', 1, 64)) + " %"
}

// Number formats a measured value (a metric, hours, a ratio) with at most
// six significant digits, without an exponent between 1e-6 and 1e15, and
// integers whole: 0.1 + 0.2 reads 0.3, not 0.30000000000000004.
func Number(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	a := math.Abs(f)
	if a < 1e-6 || a >= 1e15 {
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	// Six significant digits, as decimals, then the zeros they leave.
	decimals := max(5-int(math.Floor(math.Log10(a))), 0)
	return trimZeros(strconv.FormatFloat(f, 'f', decimals, 64))
}

// trimZeros drops a decimal part's trailing zeros, and its point when
// nothing is left after it.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

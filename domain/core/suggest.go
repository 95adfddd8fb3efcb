package core

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "X"?)` for the name closest to want
// when it is close, else "". Close is a missing "Standard_" prefix (sizes)
// or few edits: at most 3, and at most half of want's length so that a
// short typo is not "corrected" into an unrelated short name.
func DidYouMean(want string, names []string) string {
	w := strings.ToLower(strings.TrimSpace(want))
	if w == "" {
		return ""
	}
	limit := min(3, max(1, len(w)/2))
	best, bestD := "", limit+1
	for _, n := range names {
		l := strings.ToLower(n)
		if l == "standard_"+w {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
		if d := editDistance(w, l); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

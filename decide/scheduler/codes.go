package scheduler

import "sync"

// knownCodes are the reason codes this package names, in a fixed order:
// a Reason keeps its code as an index into them (1-based; 0 is no code).
var knownCodes = [...]ReasonCode{
	ReasonProvisioning, ReasonAtMax, ReasonBudget, ReasonQuota, ReasonBehind,
	ReasonGangIncomplete, ReasonNoNodes, ReasonUnavailable, ReasonDeleting,
	ReasonImageMismatch, ReasonGangTimeout, ReasonScaleWindow,
}

// behindIndex is ReasonBehind's index, looked up once: WaitingBehind
// makes most of a long queue's reasons.
var behindIndex = codeIndex(ReasonBehind)

// otherCodes holds the codes met that this package does not name (read
// back from a store written by another version), after knownCodes: an
// index past the known ones is one of these. Codes are few, so the table
// stays small; one past 255 codes in all is kept as no code (codeIndex).
var otherCodes struct {
	mu    sync.RWMutex
	codes []ReasonCode
	index map[ReasonCode]uint8
}

// codeIndex returns code's index, adding it to otherCodes if it is new.
func codeIndex(code ReasonCode) uint8 {
	if code == "" {
		return 0
	}
	for i, c := range knownCodes {
		if c == code {
			return uint8(i + 1)
		}
	}
	otherCodes.mu.RLock()
	i, ok := otherCodes.index[code]
	otherCodes.mu.RUnlock()
	if ok {
		return i
	}
	otherCodes.mu.Lock()
	defer otherCodes.mu.Unlock()
	if i, ok := otherCodes.index[code]; ok {
		return i
	}
	n := len(knownCodes) + len(otherCodes.codes) + 1
	if n > 255 {
		// More codes than any version of Shoal has (243 unknown ones):
		// the reason keeps no code rather than another code's. Such
		// reasons' codes read back as "", so Same cannot tell two of
		// them apart, and one with no sentence IsZero.
		return 0
	}
	if otherCodes.index == nil {
		otherCodes.index = map[ReasonCode]uint8{}
	}
	otherCodes.codes = append(otherCodes.codes, code)
	otherCodes.index[code] = uint8(n)
	return uint8(n)
}

// codeAt returns the code of index i.
func codeAt(i uint8) ReasonCode {
	switch {
	case i == 0:
		return ""
	case int(i) <= len(knownCodes):
		return knownCodes[i-1]
	}
	otherCodes.mu.RLock()
	defer otherCodes.mu.RUnlock()
	return otherCodes.codes[int(i)-len(knownCodes)-1]
}

package sqlq

// Interner hands out one string for equal bytes: the few workspaces,
// computes and images a long queue's rows repeat, scanned into
// sql.RawBytes that the driver reuses for the next row. The zero value is
// ready to use.
type Interner struct {
	m map[string]string
}

// Get returns the string of b, the same one for equal bytes ("" for none).
func (in *Interner) Get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if in.m == nil {
		in.m = map[string]string{}
	}
	s := string(b)
	if len(in.m) < 1024 { // bounded: a queue of many images copies the rest
		in.m[s] = s
	}
	return s
}

package entitydoc

import "time"

// Nodes, jobs and attempts are stored as a JSON document of their JSON
// fields plus columns for the fields JSON leaves out (json:"-") and for the
// fields that queries filter or sort on. Encoding first sets every time of
// the entity to its stored form (UTC, whole microseconds) on the argument
// itself, so that the document round-trips and the caller's value equals
// what reads back; pointers to times that change are replaced, never written
// through.

// normTime sets *t to its stored form (UTC, whole microseconds), as
// sqlstore's columns keep times.
func normTime(t *time.Time) { *t = stored(*t) }

// normTimePtr points *p at the stored form of **p when that differs. A nil
// *p stays nil.
func normTimePtr(p **time.Time) {
	if *p == nil {
		return
	}
	if v := stored(**p); v != **p {
		*p = &v
	}
}

// stored is t as it reads back from the store.
func stored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

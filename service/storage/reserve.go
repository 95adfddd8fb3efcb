package storage

import (
	"io"
	"sync"
)

// A workspace's storage quota holds against parallel writes because each
// write reserves its bytes here before it stores them: what a workspace
// may still store is its quota less what its files take (Files.Usage)
// less what writes in flight on this server have reserved. A write
// gives back what it did not use when it ends, stored or failed; bytes
// it stored are by then in Usage.
//
// The table is per server, on purpose. Several servers can share one
// PostgreSQL store, and each admits writes against the stored usage
// (which every server sees at once) and its own reservations only, so
// together they can pass a quota by what the others have in flight at
// that moment: at most (servers − 1) × the quota's remainder, and none
// once those writes end, since the next write sees them stored. Keeping
// reservations in the store would close that gap but hold a row lock
// per chunk across servers, and a server that died mid-upload would
// leave its reservation behind until something (a lease, a clock, a
// sweeper) expired it; in memory, a dead server's reservations go with
// it.

// reserveStep is how much an upload reserves at a time: one lock and
// one Usage per step, and a quota's last step shared by byte.
const reserveStep = 1 << 20

// storageReservations are the bytes in flight per workspace on this
// server.
type storageReservations struct {
	mu sync.Mutex
	ws map[string]*wsReservation
}

// wsReservation serialises one workspace's reservations: its Usage and
// its bytes in flight are read together, so that a write that stored
// its bytes and then gave back its reservation is counted once or
// twice, never zero times.
type wsReservation struct {
	mu       sync.Mutex
	inflight int64
}

func (r *storageReservations) of(workspace string) *wsReservation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ws == nil {
		r.ws = map[string]*wsReservation{}
	}
	w := r.ws[workspace]
	if w == nil {
		w = &wsReservation{}
		r.ws[workspace] = w
	}
	return w
}

// reserve grants up to want bytes of a workspace's quota (what is left,
// when less) and returns the grant and the bytes counted as used before
// it (stored and in flight). The caller releases the grant.
func (s *Service) reserve(workspace string, quota, want int64) (granted, used int64, err error) {
	w := s.reservations.of(workspace)
	w.mu.Lock()
	defer w.mu.Unlock()
	stored, err := s.files.Usage(workspace)
	if err != nil {
		return 0, 0, err
	}
	used = stored + w.inflight
	granted = max(0, min(want, quota-used))
	w.inflight += granted
	return granted, used, nil
}

// release gives back n reserved bytes.
func (s *Service) release(workspace string, n int64) {
	if n == 0 {
		return
	}
	w := s.reservations.of(workspace)
	w.mu.Lock()
	w.inflight -= n
	w.mu.Unlock()
}

// quotaReader reserves a workspace's quota for the bytes it reads, a
// step ahead, before its caller stores them; past the quota it fails
// with the storage_quota error, so the store drops the upload. Close
// gives back the reservation.
type quotaReader struct {
	s         *Service
	r         io.Reader
	workspace string
	quota     int64
	read      int64 // bytes passed on
	reserved  int64
	err       error // the quota error, once hit
}

func (q *quotaReader) Read(p []byte) (int, error) {
	if q.err != nil {
		return 0, q.err
	}
	n, err := q.r.Read(p)
	if need := q.read + int64(n) - q.reserved; need > 0 {
		g, used, rerr := q.s.reserve(q.workspace, q.quota, max(need, reserveStep))
		q.reserved += g
		if rerr != nil {
			q.err = rerr
			return 0, rerr
		}
		if g < need {
			// The bytes read are dropped, never passed on: the store
			// holds no byte the quota did not grant.
			q.err = storageQuotaError(q.workspace, q.quota, used)
			return 0, q.err
		}
	}
	q.read += int64(n)
	return n, err
}

// Close gives back the reservation: by now the stored bytes are in
// Usage, or there are none.
func (q *quotaReader) Close() {
	q.s.release(q.workspace, q.reserved)
	q.reserved = 0
}

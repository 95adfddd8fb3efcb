package service

import (
	"sync"

	"github.com/shoal-ml/shoal/scheduler"
)

// waitReasons holds why each queued job waits, from the scheduler's latest
// pass, keyed by "workspace/name".
type waitReasons struct {
	mu    sync.Mutex
	now   map[string]scheduler.Reason
	codes map[string]string
}

func newWaitReasons() *waitReasons {
	return &waitReasons{now: map[string]scheduler.Reason{}, codes: map[string]string{}}
}

// replace installs the reasons of a pass; jobs no longer waiting drop out.
func (w *waitReasons) replace(r map[string]scheduler.Reason) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = r
	for id := range w.codes {
		if _, ok := r[id]; !ok {
			delete(w.codes, id)
		}
	}
}

// setCode records a job's reason code and reports whether it changed.
func (w *waitReasons) setCode(id, code string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.codes[id] == code {
		return false
	}
	w.codes[id] = code
	return true
}

// get returns the current reason of a waiting job.
func (w *waitReasons) get(id string) (scheduler.Reason, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.now[id]
	return r, ok
}

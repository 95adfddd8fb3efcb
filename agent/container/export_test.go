package container

import (
	"io"
	"sync"
	"time"
)

// HangLogFollows makes e's log follows behave as podman's now and then
// do: the stream never ends once it has delivered limit bytes (all of
// the log when limit < 0). Wait gives them grace.
func HangLogFollows(e *Engine, grace time.Duration, limit int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.logFollowGrace = grace
	e.followEnding = func(rc io.ReadCloser) io.ReadCloser {
		return &hangingStream{ReadCloser: rc, left: limit, closed: make(chan struct{})}
	}
}

// hangingStream passes a stream on until limit bytes or its end, then
// blocks until closed.
type hangingStream struct {
	io.ReadCloser
	left   int
	once   sync.Once
	closed chan struct{}
}

func (h *hangingStream) Read(p []byte) (int, error) {
	if h.left == 0 {
		<-h.closed
		return 0, io.ErrClosedPipe
	}
	if h.left > 0 && len(p) > h.left {
		p = p[:h.left]
	}
	n, err := h.ReadCloser.Read(p)
	if h.left > 0 {
		h.left -= n
	}
	if err == io.EOF {
		h.left = 0
		if n > 0 {
			return n, nil
		}
		<-h.closed
		return 0, io.ErrClosedPipe
	}
	return n, err
}

func (h *hangingStream) Close() error {
	h.once.Do(func() { close(h.closed) })
	return h.ReadCloser.Close()
}

// ShortenLogFollows makes e's log follows end, as podman's now and then
// do for a container that exits at once, after limit bytes of the log.
func ShortenLogFollows(e *Engine, limit int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.followEnding = func(rc io.ReadCloser) io.ReadCloser {
		return &shortStream{ReadCloser: rc, left: limit}
	}
}

// shortStream passes a stream on until limit bytes, then ends.
type shortStream struct {
	io.ReadCloser
	left int
}

func (s *shortStream) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if len(p) > s.left {
		p = p[:s.left]
	}
	n, err := s.ReadCloser.Read(p)
	s.left -= n
	return n, err
}

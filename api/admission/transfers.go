package admission

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
)

// Uploads and downloads take as long as their size and the link need, so
// ReadTimeout cannot bound them; instead each is one of its caller's
// transfers (MaxTransfersPerPrincipal at once) and must keep moving: every
// byte read or written pushes the connection's deadline TransferStallTimeout
// ahead, so that a slow transfer goes on and a stalled one is cut.

// Transfer runs an authenticated upload or download as one of its
// caller's transfers, with rolling deadlines; 429 beyond the cap.
func (s *Controller) Transfer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("follow") == "true" {
			next.ServeHTTP(w, r) // a log follow: one of the caller's streams
			return
		}
		c := s.limits()
		id := "anonymous"
		if p := identity.PrincipalFrom(r.Context()); p != nil {
			id = p.ID
		}
		if !c.transfers.acquire(id) {
			refuseTooMany(w, r, "uploads and downloads: at most "+strconv.Itoa(c.transfers.max)+" at a time per caller; wait for one to finish and retry")
			return
		}
		defer c.transfers.release(id)
		rc := http.NewResponseController(w)
		stall := c.TransferStallTimeout
		if stall <= 0 {
			longLived(w)
			next.ServeHTTP(w, r)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body := &rollingReader{r: r.Body, rc: rc, stall: stall}
			body.extend(time.Now())
			r.Body = body
		} else {
			longLived(w) // nothing to read: the write deadline bounds it
		}
		out := &rollingWriter{ResponseWriter: w, rc: rc, stall: stall}
		defer out.finish()
		next.ServeHTTP(out, r)
	})
}

// rollingReader gives each read of the body stall to bring data (the
// deadline is pushed ahead before a read, so time the handler spends
// between reads does not count), and lifts the deadline at the end of the
// body (the handler may work on after it, while the server waits for
// the next request).
type rollingReader struct {
	r     io.ReadCloser
	rc    *http.ResponseController
	stall time.Duration
	last  time.Time
}

func (b *rollingReader) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(b.last) >= b.stall/16 {
		b.extend(now)
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *rollingReader) extend(now time.Time) {
	b.last = now
	_ = b.rc.SetReadDeadline(now.Add(b.stall))
}

func (b *rollingReader) Close() error { return b.r.Close() }

// rollingWriter pushes the write deadline stall ahead before each write,
// so that a reader that stops reading is cut once the socket's buffers
// are full for that long.
type rollingWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	last  time.Time
}

func (w *rollingWriter) Write(p []byte) (int, error) {
	if now := time.Now(); now.Sub(w.last) >= w.stall/16 {
		w.last = now
		_ = w.rc.SetWriteDeadline(now.Add(w.stall))
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes streaming flushes through.
func (w *rollingWriter) Flush() { _ = w.rc.Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (w *rollingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends what is buffered under a fresh deadline, which then also
// bounds the server's last bytes of the response; admit clears it for
// the connection's next request.
func (w *rollingWriter) finish() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
	_ = w.rc.Flush()
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
}

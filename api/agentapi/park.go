package agentapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
)

// Parking is a listener that lets the server park agents' long polls
// without what net/http keeps for a request in progress: the connection's
// read and write buffers (about 10 KiB) and two goroutines with their
// stacks. At 10,000 nodes nearly every agent waits in a sync all the time,
// and those were most of the server's memory. A sync with nothing to say
// takes its connection from net/http (Hijack), keeps only the socket and
// its place in the wake-ups (service.ParkedSync), writes its answer
// itself, and hands the connection back through Accept, where net/http
// serves the agent's next request on it as on a new connection: the
// agent keeps one connection, and the protocol on the wire is unchanged.
//
// The server serves on the Parking (http.Server.Serve) and is told of it
// (Server.SetParking). TLS is underneath: a parked *tls.Conn is served
// again as one. Requests over HTTP/2 cannot be taken from net/http; they
// wait in their handler as before.
type Parking struct {
	inner    net.Listener
	accepted chan acceptResult
	back     chan net.Conn
	done     chan struct{}
	start    sync.Once
	closing  sync.Once

	mu     sync.Mutex
	closed bool
	parked map[net.Conn]*service.ParkedSync
}

type acceptResult struct {
	c   net.Conn
	err error
}

// closeAnswerWait bounds how long Close waits for parked syncs' answers.
const closeAnswerWait = 2 * time.Second

// parkedWriteTimeout bounds the write of a parked sync's answer: an agent
// that stopped reading loses its connection, not the server's goroutine.
const parkedWriteTimeout = 10 * time.Second

// NewParking wraps ln; Close closes ln.
func NewParking(ln net.Listener) *Parking {
	return &Parking{inner: ln, accepted: make(chan acceptResult), back: make(chan net.Conn), done: make(chan struct{}),
		parked: map[net.Conn]*service.ParkedSync{}}
}

// Accept returns the next new connection, or a parked one whose answer
// was written, for its next request.
func (p *Parking) Accept() (net.Conn, error) {
	p.start.Do(func() { go p.acceptLoop() })
	select {
	case c := <-p.back:
		return c, nil
	case a := <-p.accepted:
		return a.c, a.err
	case <-p.done:
		return nil, net.ErrClosed
	}
}

// acceptLoop accepts from the inner listener until it is closed. Every
// error goes to Serve, which retries the temporary ones (too many open
// files) with a backoff and returns on the others, closing the Parking.
func (p *Parking) acceptLoop() {
	for {
		c, err := p.inner.Accept()
		select {
		case p.accepted <- acceptResult{c, err}:
		case <-p.done:
			if c != nil {
				c.Close()
			}
			return
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// Close closes the inner listener and answers every parked sync at once
// (with what it would have answered at its deadline), closing its
// connection after the answer: a graceful shutdown does not wait for
// them, and agents move to another server or retry.
func (p *Parking) Close() error {
	err := p.inner.Close()
	p.closing.Do(func() {
		close(p.done)
		p.mu.Lock()
		p.closed = true
		syncs := make([]*service.ParkedSync, 0, len(p.parked))
		for _, ps := range p.parked {
			syncs = append(syncs, ps)
		}
		p.mu.Unlock()
		// Answered side by side, and waited for a little at most:
		// http.Server.Shutdown calls Close holding its lock, and an
		// agent that stopped reading would hold each write up to
		// parkedWriteTimeout. An agent not answered in time sees its
		// connection end and moves to another server or retries.
		var wg sync.WaitGroup
		for _, ps := range syncs {
			wg.Add(1)
			go func() { defer wg.Done(); ps.Release() }()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(closeAnswerWait):
		}
	})
	return err
}

// Addr is the inner listener's address.
func (p *Parking) Addr() net.Addr { return p.inner.Addr() }

// Parked counts the syncs parked now (the tests' and metrics' view).
func (p *Parking) Parked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}

// SetParking makes the server park agents' syncs on p (see Parking).
func (h *Handlers) SetParking(p *Parking) { h.parking.Store(p) }

// park takes r's connection from net/http and answers ps on it when its
// answer comes; false when the connection cannot be taken (HTTP/2, a
// writer without Hijack), and the caller waits in its handler.
func (h *Handlers) park(w http.ResponseWriter, r *http.Request, ps *service.ParkedSync) bool {
	p, conn, keep, ok := h.takeConn(w, r)
	if ok {
		h.parkConn(p, conn, keep, ps)
	}
	return ok
}

// takeConn takes r's connection from net/http (Hijack), its body read;
// keep says whether it can serve another request after the answer.
func (h *Handlers) takeConn(w http.ResponseWriter, r *http.Request) (p *Parking, conn net.Conn, keep, ok bool) {
	p = h.parking.Load()
	if p == nil || r.ProtoMajor != 1 {
		return nil, nil, false, false
	}
	// The rest of the body would be read as the next request.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, nil, false, false
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, false, false
	}
	// Bytes read past this request (a pipelining client; agents do not
	// pipeline) cannot be handed back: that connection ends after the
	// answer.
	keep = r.ProtoAtLeast(1, 1) && !r.Close && rw.Reader.Buffered() == 0
	return p, conn, keep, true
}

// parkConn waits for ps's answer with conn taken from net/http.
func (h *Handlers) parkConn(p *Parking, conn net.Conn, keep bool, ps *service.ParkedSync) {
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.parked[conn] = ps
	}
	p.mu.Unlock()
	ps.Await(func(resp *node.AgentSyncResponse, err error) { h.answerParked(p, conn, keep, resp, err) })
	if closed {
		ps.Release()
	}
}

// answerParked writes a parked sync's answer on its connection and hands
// the connection back to net/http, or closes it.
func (h *Handlers) answerParked(p *Parking, conn net.Conn, keep bool, resp *node.AgentSyncResponse, err error) {
	p.mu.Lock()
	delete(p.parked, conn)
	keep = keep && !p.closed
	p.mu.Unlock()
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	if err != nil {
		h.errs.Write(rec, &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/agent/v1/sync"}}, err)
	} else {
		httpx.WriteJSON(rec, http.StatusOK, resp)
	}
	var out bytes.Buffer
	res := &http.Response{StatusCode: rec.status, ProtoMajor: 1, ProtoMinor: 1, Header: rec.header,
		ContentLength: int64(rec.body.Len()), Body: io.NopCloser(&rec.body), Close: !keep}
	_ = res.Write(&out)
	// The deadline stays: every request's admit sets its own.
	_ = conn.SetWriteDeadline(time.Now().Add(parkedWriteTimeout))
	if _, err := conn.Write(out.Bytes()); err != nil || !keep {
		conn.Close()
		return
	}
	select {
	case p.back <- conn:
	case <-p.done:
		conn.Close()
	}
}

// recorder is the response writer of a parked sync's answer, written
// to the connection whole once complete.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

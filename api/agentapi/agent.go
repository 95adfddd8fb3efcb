// Package agentapi serves the agent protocol under /agent/v1: a node's
// join, its syncs (parked off net/http while they wait, and queued when
// the store falls behind), its ranks' reports, logs, outputs and tokens,
// and its instance's logs and tokens. api.Server mounts these handlers in
// its route table behind the node credential's authentication; they are
// apart from the users' API because they answer machines, not people,
// and carry their own connection management (Parking, the sync queue).
package agentapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
)

// Handlers serves the agent routes over the services.
type Handlers struct {
	svc  *service.Services
	errs httpx.Errors
	log  *slog.Logger
	// parking parks agents' syncs without their connections' buffers
	// (SetParking); nil: they wait in their handlers.
	parking atomic.Pointer[Parking]
	// syncs bounds the agents' syncs computed at once (syncQueue).
	syncs *syncQueue
}

// New returns the agent handlers over svc, logging to log.
func New(svc *service.Services, log *slog.Logger) *Handlers {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handlers{svc: svc, errs: httpx.Errors{Log: log}, log: log, syncs: newSyncQueue(defaultSyncSlots())}
}

// SetSyncSlots replaces the sync queue with one of n slots and returns
// its hooks (take a slot as a sync would, release one, count the syncs
// waiting for one), so that a test can fill the slots as a store that
// falls behind does. Call before serving.
func (h *Handlers) SetSyncSlots(n int) (take func() bool, release func(), queued func() int) {
	h.syncs = newSyncQueue(n)
	return h.syncs.tryAcquire, h.syncs.release, h.syncs.queued
}

// Join exchanges a single-use join token (the bearer) for the node's
// credential.
func (h *Handlers) Join(w http.ResponseWriter, r *http.Request) {
	token, ok := httpx.Bearer(r)
	if !ok {
		h.errs.Write(w, r, core.Errorf(core.EUNAUTHORIZED, "a join token is required"))
		return
	}
	var req nodekind.JoinRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	resp, err := h.svc.JoinNode(r.Context(), token, req)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, resp)
}

// MaxSyncWait bounds an agent's long poll.
const MaxSyncWait = 30 * time.Second

// Sync is an agent's long poll (?wait=, at most MaxSyncWait): its
// lease's renewal and the work to start or stop. One with nothing to say
// is parked (Parking); one that finds every slot taken waits in the queue.
func (h *Handlers) Sync(w http.ResponseWriter, r *http.Request) {
	var req nodekind.AgentSyncRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
	wait = min(max(wait, 0), MaxSyncWait)
	q := h.syncs
	acquired := q.tryAcquire()
	if !acquired {
		if q.queued() >= maxQueuedSyncs {
			h.errs.Write(w, r, core.Errorf(core.EUNAVAILABLE, "the server is behind: %d agents' syncs are waiting; retry", maxQueuedSyncs))
			return
		}
		// Every slot taken: wait in the queue off net/http.
		if p, conn, keep, ok := h.takeConn(w, r); ok {
			// The wall clock: a request's age in the queue, no decision.
			node, ctx, enqueued := httpx.NodeFrom(r), context.WithoutCancel(r.Context()), time.Now()
			q.enqueue(func() {
				var resp *nodekind.AgentSyncResponse
				var parked *service.ParkedSync
				var err error
				stale := false
				func() {
					defer q.release()
					// net/http recovered a handler's panic; this runs on a
					// goroutine of the queue's.
					defer func() {
						if v := recover(); v != nil {
							h.log.Error("an agent's sync panicked", "node", node, "panic", v)
							err = core.Errorf(core.EINTERNAL, "the sync failed on the server")
						}
					}()
					// An agent that waited this long has given up or will
					// retry: its lease is not renewed for nothing, and an
					// overloaded server does not feed on its own backlog.
					if stale = time.Since(enqueued) > MaxSyncWait; stale {
						return
					}
					resp, parked, err = h.svc.BeginSync(ctx, node, &req, wait)
				}()
				switch {
				case stale:
					conn.Close()
				case parked != nil:
					h.parkConn(p, conn, keep, parked)
				default:
					h.answerParked(p, conn, keep, resp, err)
				}
			})
			return
		}
		// Not parkable (HTTP/2, no Parking): computed here, unbounded
		// as before.
	}
	resp, parked, err := func() (*nodekind.AgentSyncResponse, *service.ParkedSync, error) {
		if acquired {
			defer q.release() // a panic must not keep the slot
		}
		return h.svc.BeginSync(r.Context(), httpx.NodeFrom(r), &req, wait)
	}()
	if parked != nil {
		if h.park(w, r, parked) {
			return
		}
		resp, err = parked.Wait(r.Context())
	}
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, resp)
}

func rankParams(r *http.Request) (string, int, error) {
	rank, err := strconv.Atoi(r.PathValue("rank"))
	if err != nil || rank < 0 {
		return "", 0, core.FieldErrorf("rank", "must be a whole number")
	}
	return r.PathValue("attempt"), rank, nil
}

// Report records a rank's status and answers whether it may start.
func (h *Handlers) Report(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	var rep nodekind.RankReport
	if err := httpx.DecodeStrict(r.Body, &rep); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	if rep.Log != nil {
		// The end of the rank's log, written before the report is
		// applied, as the upload it replaces was: a job seen ended has
		// its whole log.
		if rep.Log.Offset < 0 {
			h.errs.Write(w, r, core.FieldErrorf("log.offset", "must be a whole number of bytes"))
			return
		}
		if len(rep.Log.Data) > nodekind.MaxReportLog {
			h.errs.Write(w, r, core.FieldErrorf("log.data", "carries %d bytes; a report carries at most %d (upload a longer log to .../logs first)", len(rep.Log.Data), nodekind.MaxReportLog))
			return
		}
		err := h.svc.WriteRankLog(r.Context(), httpx.NodeFrom(r), attempt, rank, rep.Log.Offset, rep.Log.Data)
		if err != nil && core.Transient(core.ErrorCode(err)) {
			// The agent keeps the result and tries again later.
			h.errs.Write(w, r, err)
			return
		}
		// A log refused for good did not hold the report up when it
		// was uploaded apart, and does not now: the report says why
		// it is refused, if it is.
		rep.Log = nil
	}
	next, err := h.svc.ReportRank(r.Context(), httpx.NodeFrom(r), attempt, rank, &rep)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, nodekind.AgentSyncResponse{Start: next, ReportsTakeLog: true})
}

// GPUSample records a rank's GPU utilisation sample.
func (h *Handlers) GPUSample(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	var sample nodekind.GPUSample
	if err := httpx.DecodeStrict(r.Body, &sample); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	if err := h.svc.RecordGPUSample(r.Context(), httpx.NodeFrom(r), attempt, rank, &sample); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Logs appends (at ?offset=) to a rank's log.
func (h *Handlers) Logs(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		h.errs.Write(w, r, core.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	if err := h.svc.WriteRankLog(r.Context(), httpx.NodeFrom(r), attempt, rank, offset, data); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Outputs stores a rank's outputs (a gzipped tar, up to
// service.MaxOutputBytes).
func (h *Handlers) Outputs(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, service.MaxOutputBytes)
	if err := h.svc.PutRankOutputs(r.Context(), httpx.NodeFrom(r), attempt, rank, body); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Restore sends a retried rank the outputs its previous attempt left.
func (h *Handlers) Restore(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	f, err := h.svc.OpenRestoreOutputs(r.Context(), httpx.NodeFrom(r), attempt, rank)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	io.Copy(w, f)
}

// Artifact sends a node an artifact its work needs.
func (h *Handlers) Artifact(w http.ResponseWriter, r *http.Request) {
	f, err := h.svc.OpenArtifactForNode(r.Context(), httpx.NodeFrom(r), r.PathValue("id"))
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	io.Copy(w, f)
}

// Input sends a node the kept output of another job that an input of its
// rank's job reads (service.OpenInputForNode), as a gzipped tar.
func (h *Handlers) Input(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	f, err := h.svc.OpenInputForNode(r.Context(), httpx.NodeFrom(r), attempt, rank, r.PathValue("input"))
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	io.Copy(w, f)
}

// Token mints a workload token for a job's rank on the
// calling node.
func (h *Handlers) Token(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	var req nodekind.TokenRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		h.errs.Write(w, r, err)
		return
	}
	resp, err := h.svc.MintWorkloadToken(r.Context(), httpx.NodeFrom(r), attempt, rank, &req)
	if err != nil {
		h.errs.Write(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, resp)
}

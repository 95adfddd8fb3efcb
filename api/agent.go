package api

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/service"
)

// authenticateNode resolves a node credential; agent routes accept nothing
// else, and user routes never accept a node credential.
func (s *Server) authenticateNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			s.asAnonymous(w, r, func() { s.writeError(w, r, shoal.Errorf(shoal.EUNAUTHORIZED, "a node credential is required")) })
			return
		}
		id, err := s.svc.AuthenticateNode(r.Context(), token)
		if err != nil {
			s.asAnonymous(w, r, func() { s.writeError(w, r, err) })
			return
		}
		s.authenticated(w, r)
		ctx := shoal.WithPrincipal(r.Context(), &shoal.Principal{ID: "node:" + id, Name: "node " + id, Kind: shoal.PrincipalNode})
		next.ServeHTTP(w, r.WithContext(httpx.WithNode(ctx, id)))
	})
}

func (s *Server) handleAgentJoin(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(r)
	if !ok {
		s.writeError(w, r, shoal.Errorf(shoal.EUNAUTHORIZED, "a join token is required"))
		return
	}
	var req shoal.JoinRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	resp, err := s.svc.JoinNode(r.Context(), token, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// MaxSyncWait bounds an agent's long poll.
const MaxSyncWait = 30 * time.Second

func (s *Server) handleAgentSync(w http.ResponseWriter, r *http.Request) {
	var req shoal.AgentSyncRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
	wait = min(max(wait, 0), MaxSyncWait)
	q := s.syncs
	acquired := q.tryAcquire()
	if !acquired {
		if q.queued() >= maxQueuedSyncs {
			s.writeError(w, r, shoal.Errorf(shoal.EUNAVAILABLE, "the server is behind: %d agents' syncs are waiting; retry", maxQueuedSyncs))
			return
		}
		// Every slot taken: wait in the queue off net/http.
		if p, conn, keep, ok := s.takeConn(w, r); ok {
			// The wall clock: a request's age in the queue, no decision.
			node, ctx, enqueued := nodeFrom(r), context.WithoutCancel(r.Context()), time.Now()
			q.enqueue(func() {
				var resp *shoal.AgentSyncResponse
				var parked *service.ParkedSync
				var err error
				stale := false
				func() {
					defer q.release()
					// net/http recovered a handler's panic; this runs on a
					// goroutine of the queue's.
					defer func() {
						if v := recover(); v != nil {
							s.log.Error("an agent's sync panicked", "node", node, "panic", v)
							err = shoal.Errorf(shoal.EINTERNAL, "the sync failed on the server")
						}
					}()
					// An agent that waited this long has given up or will
					// retry: its lease is not renewed for nothing, and an
					// overloaded server does not feed on its own backlog.
					if stale = time.Since(enqueued) > MaxSyncWait; stale {
						return
					}
					resp, parked, err = s.svc.BeginSync(ctx, node, &req, wait)
				}()
				switch {
				case stale:
					conn.Close()
				case parked != nil:
					s.parkConn(p, conn, keep, parked)
				default:
					s.answerParked(p, conn, keep, resp, err)
				}
			})
			return
		}
		// Not parkable (HTTP/2, no Parking): computed here, unbounded
		// as before.
	}
	resp, parked, err := func() (*shoal.AgentSyncResponse, *service.ParkedSync, error) {
		if acquired {
			defer q.release() // a panic must not keep the slot
		}
		return s.svc.BeginSync(r.Context(), nodeFrom(r), &req, wait)
	}()
	if parked != nil {
		if s.park(w, r, parked) {
			return
		}
		resp, err = parked.Wait(r.Context())
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func rankParams(r *http.Request) (string, int, error) {
	rank, err := strconv.Atoi(r.PathValue("rank"))
	if err != nil || rank < 0 {
		return "", 0, shoal.FieldErrorf("rank", "must be a whole number")
	}
	return r.PathValue("attempt"), rank, nil
}

func (s *Server) handleAgentReport(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var rep shoal.RankReport
	if err := decodeStrict(r.Body, &rep); err != nil {
		s.writeError(w, r, err)
		return
	}
	next, err := s.svc.ReportRank(r.Context(), nodeFrom(r), attempt, rank, &rep)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, shoal.AgentSyncResponse{Start: next})
}

func (s *Server) handleAgentGPUSample(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var sample shoal.GPUSample
	if err := decodeStrict(r.Body, &sample); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.svc.RecordGPUSample(r.Context(), nodeFrom(r), attempt, rank, &sample); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleAgentLogs(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		s.writeError(w, r, shoal.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.svc.WriteRankLog(r.Context(), nodeFrom(r), attempt, rank, offset, data); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleAgentOutputs(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, service.MaxOutputBytes)
	if err := s.svc.PutRankOutputs(r.Context(), nodeFrom(r), attempt, rank, body); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleAgentRestore(w http.ResponseWriter, r *http.Request) {
	attempt, rank, err := rankParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.svc.OpenRestoreOutputs(r.Context(), nodeFrom(r), attempt, rank)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	io.Copy(w, f)
}

func (s *Server) handleAgentArtifact(w http.ResponseWriter, r *http.Request) {
	f, err := s.svc.OpenArtifactForNode(r.Context(), nodeFrom(r), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	io.Copy(w, f)
}

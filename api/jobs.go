package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/tracking"
)

// MaxArtifactBytes bounds one uploaded code or input archive.
const MaxArtifactBytes = 2 << 30

func (s *Server) handleUploadArtifact(w http.ResponseWriter, r *http.Request) {
	ws, err := s.svc.FindWorkspace(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, MaxArtifactBytes)
	id, err := s.svc.PutArtifact(r.Context(), ws.Name, body, MaxArtifactBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// handleSubmitJob submits a job document of any kind through the one
// submit path (service.SubmitJobDocument), as the ARM job routes do.
func (s *Server) handleSubmitJob(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := refuseServerLabels(body, "", "trial"); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, created, err := s.svc.SubmitJobDocument(r.Context(), r.PathValue("ws"), r.PathValue("name"), body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, j)
}

func (s *Server) handleListJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := job.JobFilter{Workspace: r.PathValue("ws"), Compute: q.Get("compute")}
	if st := q.Get("status"); st != "" {
		f.Statuses = strings.Split(st, ",")
	}
	if l, err := strconv.Atoi(q.Get("limit")); err == nil {
		f.Limit = l
	}
	jobs, err := s.svc.ListJobs(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if jobs == nil {
		jobs = []*job.Job{}
	}
	writeJSON(w, http.StatusOK, listBody[*job.Job]{Value: jobs})
}

func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.svc.FindJobWithCost(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

// handlePatchJob changes a job's display name, description or tags
// (`shoal job update`); its definition never changes.
func (s *Server) handlePatchJob(w http.ResponseWriter, r *http.Request) {
	var upd service.JobUpdate
	if err := decodeStrict(r.Body, &upd); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, err := s.svc.UpdateJob(r.Context(), r.PathValue("ws"), r.PathValue("name"), upd)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) handleCancelJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.svc.CancelJob(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, j)
}

func (s *Server) handleJobAttempts(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListAttempts(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*job.Attempt]{Value: list})
}

func (s *Server) handleJobEvents(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListJobEvents(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*core.Event]{Value: list})
}

// handleJobLogs serves the log of one rank of an attempt (default: the
// latest attempt, rank 0). With follow=true it streams new lines until the
// attempt ends, as `shoal job stream` shows them.
func (s *Server) handleJobLogs(w http.ResponseWriter, r *http.Request) {
	ws, name := r.PathValue("ws"), r.PathValue("name")
	q := r.URL.Query()
	rank, err := intParam(q.Get("rank"), "rank")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	attempt, err := intParam(q.Get("attempt"), "attempt")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, err := intParam(q.Get("offset"), "offset")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if q.Get("follow") == "true" {
		s.adm.Stream(w, identity.PrincipalFrom(r.Context()), "log follows", func() { s.serveJobLog(w, r, ws, name, rank, attempt, offset, true) })
		return
	}
	s.serveJobLog(w, r, ws, name, rank, attempt, offset, false)
}

// serveJobLog writes a rank's log from offset; with follow, until the
// attempt ends.
func (s *Server) serveJobLog(w http.ResponseWriter, r *http.Request, ws, name string, rank, attempt, offset int, follow bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	flusher, _ := w.(http.Flusher)
	wrote := false
	for {
		j, err := s.svc.FindJob(r.Context(), ws, name)
		if err != nil {
			if !wrote {
				s.writeError(w, r, err)
			}
			return
		}
		att := attempt
		if att == 0 {
			att = j.AttemptCount
		}
		done := job.JobTerminal(j.Status) || (attempt != 0 && attempt < j.AttemptCount)
		if att > 0 {
			if f, err := s.svc.Files().OpenLog(j.Workspace, j.Name, att, rank); err == nil {
				if _, err := f.Seek(int64(offset), io.SeekStart); err == nil {
					n, _ := io.Copy(w, f)
					offset += int(n)
					if n > 0 {
						wrote = true
					}
				}
				f.Close()
			} else if core.ErrorCode(err) != core.ENOTFOUND {
				return // no log yet is normal; anything else ends the stream
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if !follow || done {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if attempt == 0 {
			// follow the newest attempt: a requeued job logs anew
			if j2, err := s.svc.FindJob(r.Context(), ws, name); err == nil && j2.AttemptCount != att {
				offset = 0
				if att > 0 {
					w.Write([]byte("\n--- attempt " + strconv.Itoa(j2.AttemptCount) + " ---\n"))
				}
			}
		}
	}
}

// handleJobOutputs serves the output archive of one rank of the newest
// attempt that uploaded outputs, or (?output=NAME) one output's folder of
// it; a pipeline's output is its step's (service.OpenJobOutputs).
func (s *Server) handleJobOutputs(w http.ResponseWriter, r *http.Request) {
	rank, err := intParam(r.URL.Query().Get("rank"), "rank")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.svc.OpenJobOutputs(r.Context(), r.PathValue("ws"), r.PathValue("name"), rank, r.URL.Query().Get("output"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("X-Shoal-Attempt", strconv.Itoa(f.Attempt))
	w.Header().Set("X-Shoal-Job", f.Job)
	io.Copy(w, f)
}

func (s *Server) handleListNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := s.svc.ListNodes(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*node.Node]{Value: nodes})
}

func (s *Server) handlePreemptNode(w http.ResponseWriter, r *http.Request) {
	n, err := s.svc.PreemptNode(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("node"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, n)
}

// intParam reads an optional non-negative whole-number query parameter.
func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, core.FieldErrorf(name, "must be a whole number 0 or more, got %q", v)
	}
	return n, nil
}

// handleJobMetrics answers what a job logged: each metric's summary, the
// parameters and tags, and with ?history=true every point.
func (s *Server) handleJobMetrics(w http.ResponseWriter, r *http.Request) {
	history := r.URL.Query().Get("history") == "true"
	m, err := s.tracking.JobMetrics(r.Context(), identity.PrincipalFrom(r.Context()), r.PathValue("ws"), r.PathValue("name"), history)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// Tracking is the service of what jobs log through MLflow (the studio
// reads it).
func (s *Server) Tracking() *tracking.Service { return s.tracking }

// refuseServerLabels refuses a request that sets code_asset (at the
// document's top, or in one of the objects named by nested): the code
// version a job's or component's code was packed from is the server's
// to say, when Azure's routes pack a codeId; a user setting it would make
// a job read back as code it did not run.
func refuseServerLabels(body []byte, nested ...string) error {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return nil // the decoder says what is wrong with it
	}
	for _, k := range nested {
		obj := doc
		if k != "" {
			if json.Unmarshal(doc[k], &obj) != nil {
				continue
			}
		}
		if _, ok := obj["code_asset"]; ok {
			field := "code_asset"
			if k != "" {
				field = k + ".code_asset"
			}
			return core.FieldErrorf(field, "is set by the server (the code version Azure's routes packed a codeId from); give code instead")
		}
	}
	return nil
}

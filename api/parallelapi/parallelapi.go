// Package parallelapi serves parallel jobs' ledgers (domain/parallel's
// routes) to the drivers of their ranks. It takes the attempt's ledger
// token only (service/parallel): no user's or node's credential reaches
// a ledger, and a token reaches its own attempt's ledger only.
package parallelapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/service/parallel"
)

// MaxJSONBytes bounds a JSON request: a report carries a mini-batch's
// rows, a plan up to job.MaxMiniBatches descriptions.
const MaxJSONBytes = 64 << 20

// Route is one route for the server's mux.
type Route struct {
	Pattern string
	Handler http.Handler
}

// API serves the ledger routes.
type API struct {
	svc  *parallel.Service
	errs httpx.Errors
	// Authenticated gives a request the read deadline of an
	// authenticated caller (the server's admission).
	authenticated func(w http.ResponseWriter, r *http.Request)
}

// New returns the API over svc; authenticated, when set, is called once a
// request's token is checked.
func New(svc *parallel.Service, authenticated func(w http.ResponseWriter, r *http.Request), log *slog.Logger) *API {
	return &API{svc: svc, errs: httpx.Errors{Log: log}, authenticated: authenticated}
}

// handler serves one route for an authenticated caller.
type handler func(ctx context.Context, c *parallel.Caller, w http.ResponseWriter, r *http.Request) error

// Routes are the ledger's routes, PathPrefix + {attempt} + Path*.
func (a *API) Routes() []Route {
	p := "POST " + pproto.PathPrefix + "{attempt}"
	g := "GET " + pproto.PathPrefix + "{attempt}"
	return []Route{
		{p + pproto.PathPlan, a.wrap(jsonCall(a.svc.Plan))},
		{p + pproto.PathLease, a.wrap(jsonCall(a.svc.Lease))},
		{p + pproto.PathComplete, a.wrap(jsonCall(a.svc.Complete))},
		{p + pproto.PathFiles, a.wrap(a.postFiles)},
		{g + pproto.PathFiles, a.wrap(a.stream("application/x-tar", a.svc.WriteFiles))},
		{g + pproto.PathRows, a.wrap(a.stream("text/plain; charset=utf-8", a.svc.WriteRows))},
		{g + pproto.PathErrors, a.wrap(a.stream("text/plain; charset=utf-8", a.svc.WriteErrors))},
		{g + pproto.PathProgress, a.wrap(func(ctx context.Context, c *parallel.Caller, w http.ResponseWriter, _ *http.Request) error {
			pr, err := a.svc.Progress(ctx, c.Workspace, c.Job)
			if err != nil {
				return err
			}
			if pr == nil {
				pr = &pproto.Progress{}
			}
			httpx.WriteJSON(w, http.StatusOK, pr)
			return nil
		})},
	}
}

// wrap checks the token against the path's attempt, then serves h.
func (a *API) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := httpx.Bearer(r)
		c, err := a.svc.Authenticate(r.Context(), r.PathValue("attempt"), token)
		if err != nil {
			a.errs.Write(w, r, err)
			return
		}
		if a.authenticated != nil {
			a.authenticated(w, r)
		}
		if err := h(r.Context(), c, w, r); err != nil {
			a.errs.Write(w, r, err)
		}
	})
}

// jsonCall serves a JSON request answered with JSON.
func jsonCall[Req, Resp any](fn func(context.Context, *parallel.Caller, Req) (*Resp, error)) handler {
	return func(ctx context.Context, c *parallel.Caller, w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := httpx.DecodeStrict(http.MaxBytesReader(w, r.Body, MaxJSONBytes), &req); err != nil {
			return err
		}
		resp, err := fn(ctx, c, req)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, resp)
		return nil
	}
}

func (a *API) postFiles(ctx context.Context, c *parallel.Caller, w http.ResponseWriter, r *http.Request) error {
	rank, err := strconv.Atoi(r.Header.Get(pproto.RankHeader))
	if err != nil {
		return core.FieldErrorf(pproto.RankHeader, "must be the posting rank's number")
	}
	if err := a.svc.PostFiles(ctx, c, rank, r.Body); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// stream answers a GET with what write writes. An error before the first
// byte is answered as an error; one after breaks the stream (the driver
// sees a short read and fails, writing nothing half).
func (a *API) stream(contentType string, write func(context.Context, *parallel.Caller, io.Writer) error) handler {
	return func(ctx context.Context, c *parallel.Caller, w http.ResponseWriter, r *http.Request) error {
		sw := &startWriter{w: w, contentType: contentType}
		err := write(ctx, c, sw)
		if err != nil && sw.started {
			panic(http.ErrAbortHandler)
		}
		if err == nil && !sw.started {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(http.StatusOK)
		}
		return err
	}
}

// startWriter sets the headers at the first byte.
type startWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (s *startWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", s.contentType)
		s.w.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

package api

import (
	"context"
	"github.com/shoal-ml/shoal/domain/identity"
	"io"
	"net/http"

	"github.com/shoal-ml/shoal/api/blobapi"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/blobs"
)

// newBlobs is the blob service of the workspaces' workspaceblobstore
// (nil on a server without a secrets key: it could sign no SAS), over
// the server's store and file store, its uploads within each
// workspace's storage quota.
func newBlobs(svc *service.Services) *blobs.Service {
	if svc.SecretsKey() == nil {
		return nil
	}
	return blobs.New(blobs.Config{Store: svc.Store(), Files: svc.Files(), Put: svc.PutArtifact, Key: svc.SecretsKey(), Now: svc.Now,
		Outputs: func(ctx context.Context, workspace, job, output string) (io.ReadCloser, error) {
			// Rank 0's, as a job's input of the same path reads it.
			return svc.OpenJobOutputs(ctx, workspace, job, 0, output)
		}})
}

// Blobs returns the blob service (nil without a secrets key), for the
// services that sign its SAS or read its blobs (code assets).
func (s *Server) Blobs() *blobs.Service { return s.blobs }

// blobHandler picks the Blob endpoint for a request that is for it
// (blobapi.Match: the account's host or path), else h. The endpoint
// authenticates each request by its SAS, not a bearer token, so it is
// served as anonymous; it bounds its bodies itself.
func (s *Server) blobHandler(r *http.Request, h http.Handler) http.Handler {
	if s.blobs == nil || !blobapi.Match(r) {
		return h
	}
	return s.blobFront
}

// newBlobFront is the Blob endpoint's front door (blobapi.Handler.Front):
// a request is anonymous until its SAS checks, then served as the
// signature's caller: the authenticated read deadline, and for an
// upload or a download the transfers' rolling deadlines and per-caller
// cap, as the API's own uploads.
func (s *Server) newBlobFront() http.Handler {
	bh := &blobapi.Handler{Svc: s.blobs, Log: s.log}
	return bh.Front(blobapi.Admission{
		Anonymous: s.adm.AsAnonymous,
		Signed: func(w http.ResponseWriter, r *http.Request, caller string, transfer bool, h http.Handler) {
			s.adm.Authenticated(w, r)
			if !transfer {
				h.ServeHTTP(w, r)
				return
			}
			p := &identity.Principal{ID: caller, Name: caller, Kind: "sas"}
			s.transfer(h).ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
		},
	})
}

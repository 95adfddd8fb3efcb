package api

import (
	"context"
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
	return s.anonymousOnly(&blobapi.Handler{Svc: s.blobs, Log: s.log})
}

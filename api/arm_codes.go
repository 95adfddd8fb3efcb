package api

import (
	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/codes"
)

// withBlobs gives the ARM handlers the code versions' service, the
// blob service that signs workspaceblobstore's SAS (listSecrets,
// startPendingUpload) and the resolver that turns a job's codeId into
// the artifact its nodes fetch, before any route takes its handler.
func (s *Server) withBlobs(h *arm.Handlers) {
	h.CodeSvc, h.Blobs, h.Codes = s.codes, s.blobs, s.CodeResolver()
}

// armCodeRoutes are Azure's code asset routes (…/codes), authorized as
// codes/read and codes/write: startPendingUpload, which answers a SAS to
// upload a version's files, is a write.
func (s *Server) armCodeRoutes(h arm.Handlers) []Route {
	routes := armAssetRoutes("codes", identity.ActCodesRead, identity.ActCodesWrite, h.CodeRoutes())
	return append(routes, Route{Pattern: "POST " + armPrefix + "/codes/{name}/versions/{version}/startPendingUpload",
		Action: identity.ActCodesWrite, Audit: "codes/versions/startPendingUpload/action", handler: arm.Checked(h.StartPendingUpload)})
}

// CodeResolver returns what turns a job's code version into the artifact
// the agent fetches (arm.CodeResolver), for the ARM job routes.
func (s *Server) CodeResolver() *codes.Resolver {
	return &codes.Resolver{Store: s.svc.Store(), Files: s.svc.Files(), Put: s.svc.PutArtifact, Codes: s.codes}
}

package api

import (
	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/codes"
)

// withBlobs gives the ARM handlers the code versions' service and the
// blob service that signs workspaceblobstore's SAS (listSecrets,
// startPendingUpload), before any route takes its handler.
func (s *Server) withBlobs(h *arm.Handlers) {
	h.CodeSvc, h.Blobs = s.codes, s.blobs
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
// the agent fetches (arm.CodeResolver), for the lead to wire into the
// ARM job routes.
func (s *Server) CodeResolver() *codes.Resolver {
	return &codes.Resolver{Store: s.svc.Store(), Files: s.svc.Files(), Put: s.svc.PutArtifact, Codes: s.codes}
}

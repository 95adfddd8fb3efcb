package api

// Shoal's OAuth 2.0 authority, for Azure's identity libraries (package
// oauth has the handlers and the shapes served): the tenant is accepted
// and ignored, one Shoal server being one directory.
func (s *Server) oauthRoutes() []Route {
	return []Route{
		{Pattern: "GET /{tenant}/v2.0/.well-known/openid-configuration", Public: true, handler: s.oauth.Metadata},
		{Pattern: "GET /adfs/.well-known/openid-configuration", Public: true, handler: s.oauth.Metadata},
		{Pattern: "POST /{tenant}/oauth2/v2.0/token", Public: true, handler: s.oauth.Token},
		{Pattern: "POST /adfs/oauth2/token", Public: true, handler: s.oauth.Token},
	}
}

package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal"
)

// Shoal's OAuth 2.0 authority, for Azure's identity libraries
// (azure-identity's ClientSecretCredential, azidentity's): with
// AZURE_AUTHORITY_HOST set to Shoal's URL they read the OpenID metadata
// of {authority}/{tenant} and post the client-credentials grant to the
// token endpoint it names. Two shapes are served:
//
//   - Microsoft Entra's: /{tenant}/v2.0/.well-known/openid-configuration
//     and /{tenant}/oauth2/v2.0/token, for any tenant. MSAL first asks
//     login.microsoftonline.com whether an unknown host is an authority
//     ("instance discovery") unless the client turns that off.
//   - AD FS's: /adfs/.well-known/openid-configuration and
//     /adfs/oauth2/token. MSAL never runs instance discovery for the
//     tenant "adfs" (as for Azure Stack Hub), so AZURE_TENANT_ID=adfs
//     works on a machine that cannot reach Microsoft, with no code change.
//
// The tenant is accepted and ignored: one Shoal server is one directory.
func (s *Server) oauthRoutes() []Route {
	return []Route{
		{Pattern: "GET /{tenant}/v2.0/.well-known/openid-configuration", Public: true, handler: s.handleOAuthMetadata},
		{Pattern: "GET /adfs/.well-known/openid-configuration", Public: true, handler: s.handleOAuthMetadata},
		{Pattern: "POST /{tenant}/oauth2/v2.0/token", Public: true, handler: s.handleOAuthToken},
		{Pattern: "POST /adfs/oauth2/token", Public: true, handler: s.handleOAuthToken},
	}
}

// authorityBase is the authority's URL: the server's configured public
// URL, never the request's Host header. The metadata tells clients where
// to send their client secret; built from a Host header, a forged one (a
// poisoned cache, a rebinding name) would send it elsewhere.
func (s *Server) authorityBase() string {
	return strings.TrimRight(s.svc.PublicURL(), "/")
}

func (s *Server) handleOAuthMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.authorityBase()
	tenant := r.PathValue("tenant")
	token, authorize := base+"/"+tenant+"/oauth2/v2.0/token", base+"/"+tenant+"/oauth2/v2.0/authorize"
	if tenant == "" { // the AD FS route
		token, authorize = base+"/adfs/oauth2/token", base+"/adfs/oauth2/authorize"
	}
	issuer := strings.TrimRight(s.svc.Workload().IssuerURL(), "/")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":         issuer,
		"token_endpoint": token,
		// No user signs in here (only the client-credentials grant is
		// served), but MSAL requires the field.
		"authorization_endpoint":                authorize,
		"jwks_uri":                              base + "/.well-known/jwks.json",
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
		"response_types_supported":              []string{"token"},
		"subject_types_supported":               []string{"pairwise"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	})
}

// oauthError is RFC 6749's error response, which MSAL reports verbatim.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// handleOAuthToken serves the client-credentials grant (RFC 6749 §4.4)
// for service principals: client_id and client_secret in the form or in
// HTTP Basic authentication, scope "<resource>/.default".
func (s *Server) handleOAuthToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "the body is not a form: " + err.Error()})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, oauthError{"unsupported_grant_type", "grant_type " + strconv.Quote(gt) + " is not supported: only client_credentials (a service principal's client ID and secret)"})
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	ri := requestInfo(r, "oauth2/token")
	ri.Target = "serviceprincipals/" + id
	if id == "" || secret == "" {
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", "client_id and client_secret are required (AZURE_CLIENT_ID and AZURE_CLIENT_SECRET)"})
		return
	}
	tok, p, err := s.svc.ClientCredentialsToken(r.Context(), id, secret, r.PostForm.Get("scope"))
	switch shoal.ErrorCode(err) {
	case "":
	case shoal.EINVALID:
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_scope", shoal.ErrorMessage(err)})
		return
	case shoal.EUNAUTHORIZED:
		_ = s.svc.RecordAudit(r.Context(), nil, ri, shoal.AuditDenied, shoal.ErrorMessage(err))
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", shoal.ErrorMessage(err)})
		return
	default:
		s.writeError(w, r, err)
		return
	}
	_ = s.svc.RecordAudit(r.Context(), p, ri, shoal.AuditSucceeded, "token for "+tok.Resource)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	expiresIn, _ := strconv.ParseInt(tok.ExpiresIn, 10, 64)
	writeJSON(w, http.StatusOK, map[string]any{
		"token_type": "Bearer", "access_token": tok.AccessToken,
		"expires_in": expiresIn, "ext_expires_in": expiresIn,
	})
}

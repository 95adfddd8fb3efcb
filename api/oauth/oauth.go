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
// api.Server routes the paths to these handlers.
package oauth

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service"
)

// Authority is the authority's URL (what service principals are told
// to set as AZURE_AUTHORITY_HOST): the server's configured public
// URL, never the request's Host header. The metadata tells clients where
// to send their client secret; built from a Host header, a forged one (a
// poisoned cache, a rebinding name) would send it elsewhere.
func (h *Handlers) Authority() string {
	return strings.TrimRight(h.svc.PublicURL(), "/")
}

// Handlers serve the authority's metadata and token endpoint.
type Handlers struct {
	svc  *service.Services
	errs httpx.Errors
}

// New returns the authority's handlers over svc; errs writes errors that
// are not OAuth's own (a store that fails).
func New(svc *service.Services, errs httpx.Errors) *Handlers {
	return &Handlers{svc: svc, errs: errs}
}

// Metadata serves the OpenID metadata of the authority, for Entra's
// shape (/{tenant}/v2.0/...) and AD FS's (/adfs/...).
func (h *Handlers) Metadata(w http.ResponseWriter, r *http.Request) {
	base := h.Authority()
	tenant := r.PathValue("tenant")
	token, authorize := base+"/"+tenant+"/oauth2/v2.0/token", base+"/"+tenant+"/oauth2/v2.0/authorize"
	if tenant == "" { // the AD FS route
		token, authorize = base+"/adfs/oauth2/token", base+"/adfs/oauth2/authorize"
	}
	issuer := strings.TrimRight(h.svc.Workload().IssuerURL(), "/")
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
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

// Token serves the client-credentials grant (RFC 6749 §4.4)
// for service principals: client_id and client_secret in the form or in
// HTTP Basic authentication, scope "<resource>/.default".
func (h *Handlers) Token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "the body is not a form: " + err.Error()})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		httpx.WriteJSON(w, http.StatusBadRequest, oauthError{"unsupported_grant_type", "grant_type " + strconv.Quote(gt) + " is not supported: only client_credentials (a service principal's client ID and secret)"})
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	ri := httpx.RequestInfo(r, "oauth2/token")
	ri.Target = "serviceprincipals/" + id
	if id == "" || secret == "" {
		httpx.WriteJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", "client_id and client_secret are required (AZURE_CLIENT_ID and AZURE_CLIENT_SECRET)"})
		return
	}
	tok, p, err := h.svc.ClientCredentialsToken(r.Context(), id, secret, r.PostForm.Get("scope"))
	switch core.ErrorCode(err) {
	case "":
	case core.EINVALID:
		httpx.WriteJSON(w, http.StatusBadRequest, oauthError{"invalid_scope", core.ErrorMessage(err)})
		return
	case core.EUNAUTHORIZED:
		_ = h.svc.RecordAudit(r.Context(), nil, ri, identity.AuditDenied, core.ErrorMessage(err))
		httpx.WriteJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", core.ErrorMessage(err)})
		return
	default:
		h.errs.Write(w, r, err)
		return
	}
	_ = h.svc.RecordAudit(r.Context(), p, ri, identity.AuditSucceeded, "token for "+tok.Resource)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	expiresIn, _ := strconv.ParseInt(tok.ExpiresIn, 10, 64)
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"token_type": "Bearer", "access_token": tok.AccessToken,
		"expires_in": expiresIn, "ext_expires_in": expiresIn,
	})
}

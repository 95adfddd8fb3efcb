package access

import (
	"context"
	"crypto/subtle"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/store"
)

// ServicePrincipalTokenTTL is the lifetime of a token from the OAuth 2.0
// token endpoint (Azure's is about an hour too).
const ServicePrincipalTokenTTL = WorkloadTokenTTL

// CreateServicePrincipal adds a service principal (administrators only)
// and returns it with its secret, which is shown this once: only its hash
// is stored.
func (s *Service) CreateServicePrincipal(ctx context.Context, name, description string) (*identity.ServicePrincipal, string, error) {
	if err := identity.RequireAdmin(ctx, "creating service principals"); err != nil {
		return nil, "", err
	}
	if err := checkSecretOutlives(ctx); err != nil {
		return nil, "", err
	}
	if err := identity.ValidateServicePrincipalName(name); err != nil {
		return nil, "", err
	}
	if len(description) > 256 {
		return nil, "", core.FieldErrorf("description", "is %d characters long; at most 256", len(description))
	}
	secret, hash, err := identity.NewServicePrincipalSecret()
	if err != nil {
		return nil, "", err
	}
	sp := &identity.ServicePrincipal{Name: name, Description: description, ClientID: newClientID(s.cfg.Random), SecretHash: hash, CreatedBy: identity.ActorName(ctx)}
	identity.SetAuditDetail(ctx, "service principal %s (client ID %s)", name, sp.ClientID)
	err = s.store.Update(ctx, func(tx store.Tx) error {
		sp.CreatedOn = tx.Now()
		sp.SecretCreatedOn = sp.CreatedOn
		return tx.InsertServicePrincipal(sp)
	})
	if err != nil {
		return nil, "", err
	}
	return sp, secret, nil
}

// ListServicePrincipals lists service principals (administrators only).
func (s *Service) ListServicePrincipals(ctx context.Context) (out []*identity.ServicePrincipal, err error) {
	if err := identity.RequireAdmin(ctx, "listing service principals"); err != nil {
		return nil, err
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListServicePrincipals()
		return err
	})
	return out, err
}

// FindServicePrincipal returns a service principal by name (administrators only).
func (s *Service) FindServicePrincipal(ctx context.Context, name string) (sp *identity.ServicePrincipal, err error) {
	if err := identity.RequireAdmin(ctx, "reading service principals"); err != nil {
		return nil, err
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		sp, err = tx.GetServicePrincipal(name)
		return err
	})
	return sp, err
}

// ResetServicePrincipalSecret gives a service principal a new secret and
// returns it (shown once). The old secret stops working at once, and
// tokens minted with it are refused from then on.
func (s *Service) ResetServicePrincipalSecret(ctx context.Context, name string) (*identity.ServicePrincipal, string, error) {
	if err := identity.RequireAdmin(ctx, "resetting service principal secrets"); err != nil {
		return nil, "", err
	}
	if err := checkSecretOutlives(ctx); err != nil {
		return nil, "", err
	}
	secret, hash, err := identity.NewServicePrincipalSecret()
	if err != nil {
		return nil, "", err
	}
	var sp *identity.ServicePrincipal
	err = s.store.Update(ctx, func(tx store.Tx) error {
		sp, err = tx.GetServicePrincipal(name)
		if err != nil {
			return err
		}
		sp.SecretHash, sp.SecretCreatedOn = hash, tx.Now()
		identity.SetAuditDetail(ctx, "new secret for service principal %s", sp.Name)
		return tx.UpdateServicePrincipal(sp)
	})
	if err != nil {
		return nil, "", err
	}
	return sp, secret, nil
}

// DeleteServicePrincipal removes a service principal and its role
// assignments in one transaction; its tokens are refused from then on.
func (s *Service) DeleteServicePrincipal(ctx context.Context, name string) error {
	if err := identity.RequireAdmin(ctx, "deleting service principals"); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		sp, err := tx.GetServicePrincipal(name)
		if err != nil {
			return err
		}
		list, err := tx.ListRoleAssignments(sp.PrincipalID(), "")
		if err != nil {
			return err
		}
		for _, a := range list {
			if err := tx.DeleteRoleAssignment(a.ID); err != nil {
				return err
			}
		}
		identity.SetAuditDetail(ctx, "service principal %s and its %d role assignments", sp.Name, len(list))
		return tx.DeleteServicePrincipal(sp.Name)
	})
}

// ClientCredentialsToken answers the OAuth 2.0 client-credentials grant:
// the client ID and secret must be a service principal's, and the scope
// "<resource>/.default" names the audience (Shoal's URL for the native
// API, https://management.azure.com/ for the Resource Manager routes).
// Errors are EUNAUTHORIZED (invalid_client) or EINVALID (invalid_scope).
func (s *Service) ClientCredentialsToken(ctx context.Context, clientID, secret, scope string) (*node.TokenResponse, *identity.Principal, error) {
	if s.cfg.Workload == nil {
		return nil, nil, core.Errorf(core.ENOTIMPLEMENTED, "this server issues no tokens")
	}
	resource, err := resourceOfScope(scope)
	if err != nil {
		return nil, nil, err
	}
	var sp *identity.ServicePrincipal
	err = s.store.View(ctx, func(tx store.Tx) error {
		sp, err = tx.FindServicePrincipalByClientID(clientID)
		return err
	})
	// The same answer whether the client ID or the secret is wrong, and a
	// comparison that takes the same time either way.
	ok := err == nil && subtle.ConstantTimeCompare([]byte(identity.HashToken(secret)), []byte(sp.SecretHash)) == 1
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, core.Errorf(core.EUNAUTHORIZED, "invalid client: no service principal has that client ID and secret")
	}
	tok, err := s.MintToken(ctx, workload.Claims{Subject: sp.PrincipalID(), Audience: resource, ClientID: sp.ClientID, Binding: secretBinding(sp)})
	if err != nil {
		return nil, nil, err
	}
	return tok, &identity.Principal{ID: sp.PrincipalID(), Name: "service principal " + sp.Name, Kind: identity.PrincipalServicePrincipal}, nil
}

// mlAudiences are Azure ML's resource ids in Azure's clouds (azure-ai-ml's
// aml_resource_id, trailing slash stripped).
var mlAudiences = map[string]bool{"https://ml.azure.com": true, "https://ml.azure.cn": true, "https://ml.azure.us": true}

// resourceOfScope turns a client-credentials scope into an audience:
// "https://management.azure.com/.default" is https://management.azure.com/.
func resourceOfScope(scope string) (string, error) {
	var fields []string
	for _, f := range strings.Fields(scope) {
		// MSAL adds OpenID Connect's scopes to every request; they ask
		// for nothing a client-credentials token carries.
		switch f {
		case "openid", "offline_access", "profile", "email":
			continue
		}
		fields = append(fields, f)
	}
	if len(fields) != 1 {
		return "", core.FieldErrorf("scope", "must be one resource's \"<resource>/.default\" (got %q)", scope)
	}
	resource, ok := strings.CutSuffix(fields[0], "/.default")
	if !ok || resource == "" {
		return "", core.FieldErrorf("scope", "%q must end in /.default: the client-credentials grant asks for all of a resource's permissions", fields[0])
	}
	if mlAudiences[strings.TrimSuffix(resource, "/")] {
		// Azure ML's resource is its own audience without a slash:
		// azure-ai-ml decodes the token it asks for
		// (https://ml.azure.com/.default) and refuses one whose aud is
		// not exactly https://ml.azure.com (pipelines, user identity).
		return strings.TrimSuffix(resource, "/"), nil
	}
	if strings.HasPrefix(resource, "https://") && !strings.HasSuffix(resource, "/") && strings.Count(resource, "/") == 2 {
		// Azure's resource URLs carry a trailing slash in tokens' audience.
		return resource + "/", nil
	}
	return resource, nil
}

// secretBinding binds a service principal's token to the secret it was
// minted with: a reset makes a new secret, so the token is refused from
// then on, whatever the clocks say (a token's iat has whole seconds, and
// a reset can fall in the second a token was minted).
func secretBinding(sp *identity.ServicePrincipal) string {
	return tokenBinding("sp-secret", sp.SecretHash)
}

// authenticateServicePrincipal checks that a token's service principal
// still exists with the client ID it was minted for, and that the token
// was minted with its current secret.
func authenticateServicePrincipal(tx store.Tx, c *workload.Claims) (*identity.Principal, error) {
	name := strings.TrimPrefix(c.Subject, "sp:")
	sp, err := tx.GetServicePrincipal(name)
	if core.ErrorCode(err) == core.ENOTFOUND || (err == nil && sp.ClientID != c.ClientID) {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token's service principal %s no longer exists", name)
	} else if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(c.Binding), []byte(secretBinding(sp))) != 1 {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token was minted before service principal %s's secret was reset", name)
	}
	return &identity.Principal{ID: sp.PrincipalID(), Name: "service principal " + sp.Name, Kind: identity.PrincipalServicePrincipal}, nil
}

// checkSecretOutlives refuses to mint a service principal's secret, which
// never expires, with a token that does: a stolen short-lived token (a
// studio session's) must not buy a lasting credential.
func checkSecretOutlives(ctx context.Context) error {
	p := identity.PrincipalFrom(ctx)
	if p == nil || p.ExpiresOn == nil {
		return nil
	}
	return core.Errorf(core.EFORBIDDEN, "a service principal's secret never expires, and the token this request is made with expires at %s: use a token without expiry to make or reset one", p.ExpiresOn.UTC().Format(time.RFC3339))
}

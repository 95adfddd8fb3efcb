package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/server/oidcauth"
	"github.com/shoal-ml/shoal/studio"
)

// mountStudio serves the studio at / next to the API, with sign-in by
// OIDC when the config names a provider.
func (m *Main) mountStudio(ctx context.Context, srv *api.Server, cfg *config.Config) error {
	srv.SetSecure(m.scheme == "https")
	sc := studio.Config{Svc: m.svc, Principal: srv.Principal, Tracking: srv.Tracking(), Secure: m.scheme == "https", Logger: m.log}
	if o := cfg.OIDC; o != nil {
		if err := o.Validate(); err != nil {
			return err
		}
		redirect := o.RedirectURL
		if redirect == "" {
			redirect = strings.TrimRight(m.publicURL(cfg), "/") + "/signin/oidc/callback"
		}
		p, err := oidcauth.New(ctx, oidcauth.Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			RedirectURL: redirect, HTTPClient: http.DefaultClient})
		if err != nil {
			return fmt.Errorf("oidc: %w", err)
		}
		name := o.DisplayName
		if name == "" {
			name = "OIDC"
		}
		sc.OIDC = &studio.OIDC{Provider: p, DisplayName: name}
	}
	st, err := studio.New(sc)
	if err != nil {
		return fmt.Errorf("studio: %w", err)
	}
	for pattern, h := range st.Routes() {
		srv.Mount(pattern, h)
	}
	return nil
}

// publicURL is where browsers reach the server.
func (m *Main) publicURL(cfg *config.Config) string {
	if cfg.AdvertiseURL != "" {
		return cfg.AdvertiseURL
	}
	return m.URL()
}

// Package oidcauth signs users in with an OpenID Connect provider: the
// adapter behind shoal.OIDCVerifier (ID token verification with
// github.com/coreos/go-oidc) and the authorization-code flow's client
// (golang.org/x/oauth2) the studio uses.
package oidcauth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/shoal-ml/shoal/domain/identity"
	"golang.org/x/oauth2"
)

// Config names the provider and this server as its client.
type Config struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer + "/.well-known/openid-configuration").
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is where the provider sends the browser back
	// (<server>/signin/oidc/callback).
	RedirectURL string
	// HTTPClient reaches the provider; default http.DefaultClient.
	HTTPClient *http.Client
}

// Provider is a discovered OpenID Connect provider.
type Provider struct {
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
	client   *http.Client
}

// New discovers the provider (one request to its discovery document).
func New(ctx context.Context, cfg Config) (*Provider, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	ctx = oidc.ClientContext(ctx, client)
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc: discover %s: %w", cfg.Issuer, err)
	}
	return &Provider{
		verifier: p.Verifier(&oidc.Config{ClientID: cfg.ClientID}),
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}},
		client: client,
	}, nil
}

// Verify implements shoal.OIDCVerifier: signature (the provider's keys),
// issuer, audience (this client) and expiry.
func (p *Provider) Verify(ctx context.Context, raw string) (*identity.OIDCClaims, error) {
	tok, err := p.verifier.Verify(oidc.ClientContext(ctx, p.client), raw)
	if err != nil {
		return nil, err
	}
	var c struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := tok.Claims(&c); err != nil {
		return nil, err
	}
	return &identity.OIDCClaims{Issuer: tok.Issuer, Subject: tok.Subject, Email: c.Email, EmailVerified: c.EmailVerified}, nil
}

// VerifyNonce verifies an ID token and that it carries the nonce the
// sign-in started with (a replayed token carries another).
func (p *Provider) VerifyNonce(ctx context.Context, raw, nonce string) (*identity.OIDCClaims, error) {
	tok, err := p.verifier.Verify(oidc.ClientContext(ctx, p.client), raw)
	if err != nil {
		return nil, err
	}
	if tok.Nonce != nonce {
		return nil, fmt.Errorf("oidc: the ID token's nonce does not match this sign-in")
	}
	return p.Verify(ctx, raw)
}

// AuthCodeURL is where to send the browser to sign in, with PKCE.
func (p *Provider) AuthCodeURL(state, nonce, verifier string) string {
	return p.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
}

// Exchange trades the code the provider sent back for the raw ID token.
func (p *Provider) Exchange(ctx context.Context, code, verifier string) (string, error) {
	tok, err := p.oauth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, p.client), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("oidc: exchange the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return "", fmt.Errorf("oidc: the provider sent no ID token")
	}
	return raw, nil
}

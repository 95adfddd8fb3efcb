// Package workload signs and verifies the tokens workloads present as their
// managed identity.
//
// Code running in a job asks the node agent's MSI endpoint for a token, as it
// would on Azure; the agent obtains it from the server, which mints it here.
// Tokens are RS256 JWTs signed with 2048-bit RSA keys that rotate: the
// server publishes the public halves as a JWK Set next to an OpenID
// discovery document, so any OIDC verifier (cloud workload-identity
// federation, a service mesh, the Shoal API itself) can check them.
package workload

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Defaults and fixed parameters.
const (
	// DefaultRotation is how long a key signs before the next one replaces it.
	DefaultRotation = 24 * time.Hour
	// DefaultMaxTTL caps the lifetime of a token.
	DefaultMaxTTL = time.Hour
	// Leeway is the clock skew Verify tolerates on exp, nbf and iat.
	Leeway = 30 * time.Second
	// KeyBits is the size of the RSA signing keys.
	KeyBits = 2048
	// Algorithm is the only signing algorithm minted and accepted.
	Algorithm = "RS256"
	// JWKSPath is where the JWK Set is served, relative to the issuer URL.
	JWKSPath = "/.well-known/jwks.json"
	// DiscoveryPath is where the OpenID discovery document is served,
	// relative to the issuer URL.
	DiscoveryPath = "/.well-known/openid-configuration"

	// maxTokenLen bounds what Verify parses: real tokens are about 1 KiB.
	maxTokenLen = 16 << 10
	// refreshInterval throttles reloading keys from the KeyStore.
	refreshInterval = time.Second
)

// Claim names beyond the registered ones.
const (
	ClaimAppID     = "appid"
	ClaimOID       = "oid"
	ClaimAttempt   = "shoal_attempt"
	ClaimJob       = "shoal_job"
	ClaimSubmitter = "shoal_submitter"
	ClaimBinding   = "shoal_binding"
)

// KeyStore persists signing keys (the server implements it over its store).
// Private keys are kept as PEM (PKCS #8).
type KeyStore interface {
	// ListKeys returns every stored key, newest first.
	ListKeys(ctx context.Context) ([]*identity.SigningKey, error)
	// InsertKey stores a new key.
	InsertKey(ctx context.Context, k *identity.SigningKey) error
	// UpdateKey replaces a stored key; it is used to retire keys.
	UpdateKey(ctx context.Context, k *identity.SigningKey) error
}

// Config configures an Issuer.
type Config struct {
	// Keys persists the signing keys. Required.
	Keys KeyStore
	// Clock tells the time for iat/exp, verification and rotation
	// (default the system clock).
	Clock core.Clock
	// Issuer is the "iss" claim and the discovery document's issuer,
	// normally the server's URL. Required.
	Issuer string
	// Rotation is how long a key signs before Rotate replaces it
	// (default 24h).
	Rotation time.Duration
	// MaxTTL caps a token's lifetime (default 1h). Retired keys stay
	// published for MaxTTL (plus Leeway) so that their tokens keep
	// verifying until they expire.
	MaxTTL time.Duration
	// Random is the source of token IDs (default crypto/rand). Keys are
	// always generated from a secure source: since Go 1.26 crypto/rsa
	// ignores the reader it is given.
	Random io.Reader
}

// Claims are what a workload token asserts.
type Claims struct {
	// Subject is the principal, e.g. "identity:trainer" or
	// "identity:ws/compute" ("sub").
	Subject string
	// Audience is the requested resource ("aud").
	Audience string
	// ClientID is the identity's client ID ("appid" and "oid").
	ClientID string
	// AttemptID binds the token to one job attempt ("shoal_attempt").
	AttemptID string
	// Job is "workspace/job" ("shoal_job").
	Job string
	// Submitter is the principal of the job's submitter ("shoal_submitter").
	// It is informational: the server derives the submitter from the
	// record the token is bound to.
	Submitter string
	// Binding names the generation of the record the token is bound to
	// (an instance's run, a service principal's secret), so that a token
	// dies when that record is replaced ("shoal_binding").
	Binding string
	// ExpiresAt is when the token expires ("exp"); set by Mint and Verify.
	ExpiresAt time.Time
	// IssuedAt is when the token was minted ("iat"); set by Mint and Verify.
	IssuedAt time.Time
	// ID is the token's unique ID ("jti"); Mint generates one when empty.
	ID string
}

// Issuer mints and verifies workload tokens and publishes its keys. It is
// safe for concurrent use; several Issuers (server replicas) may share one
// KeyStore.
type Issuer struct {
	cfg Config

	// keys is the current immutable snapshot of parsed keys.
	keys atomic.Pointer[keySet]
	// refreshMu serializes reloads so concurrent misses share one.
	refreshMu sync.Mutex
	// rotateMu serializes Rotate within the process.
	rotateMu sync.Mutex
}

// keySet is a snapshot of the stored keys that may still be published.
type keySet struct {
	list   []*key // newest first
	byID   map[string]*key
	loaded time.Time // clock time of the load
}

// key is a parsed signing key.
type key struct {
	id      string
	created time.Time
	retired *time.Time
	priv    *rsa.PrivateKey
}

// New returns an Issuer for cfg, filling in defaults. It panics when Keys
// or Issuer is missing: that is a programming error.
func New(cfg Config) *Issuer {
	if cfg.Keys == nil {
		panic("workload.New: Config.Keys is required")
	}
	if cfg.Issuer == "" {
		panic("workload.New: Config.Issuer is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Rotation <= 0 {
		cfg.Rotation = DefaultRotation
	}
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = DefaultMaxTTL
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	i := &Issuer{cfg: cfg}
	i.keys.Store(&keySet{byID: map[string]*key{}})
	return i
}

// published reports whether k may still verify tokens at now: it signs,
// or it was retired less than MaxTTL (plus Leeway) ago.
func (i *Issuer) published(k *key, now time.Time) bool {
	return k.retired == nil || now.Before(k.retired.Add(i.cfg.MaxTTL+Leeway))
}

// refresh reloads the keys from the KeyStore unless the snapshot was loaded
// less than a second ago (force skips that check). Keys already parsed are
// reused, and keys no longer published are not parsed at all.
func (i *Issuer) refresh(ctx context.Context, force bool) (*keySet, error) {
	i.refreshMu.Lock()
	defer i.refreshMu.Unlock()
	now := i.cfg.Clock.Now()
	old := i.keys.Load()
	if !force && !old.loaded.IsZero() && !now.Before(old.loaded) && now.Sub(old.loaded) < refreshInterval {
		return old, nil
	}
	stored, err := i.cfg.Keys.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	ks := &keySet{byID: map[string]*key{}, loaded: now}
	for _, sk := range stored {
		k := &key{id: sk.ID, created: sk.CreatedOn, retired: sk.RetiredOn}
		if !i.published(k, now) {
			continue
		}
		if prev := old.byID[sk.ID]; prev != nil {
			k.priv = prev.priv
		} else if k.priv, err = parsePrivateKey(sk.PrivatePEM); err != nil {
			return nil, core.Errorf(core.EINTERNAL, "workload signing key %s: %v", sk.ID, err)
		}
		if _, dup := ks.byID[k.id]; dup {
			continue
		}
		ks.list = append(ks.list, k)
		ks.byID[k.id] = k
	}
	i.keys.Store(ks)
	return ks, nil
}

// Rotate creates the first key, or a new one when the newest is older than
// Rotation, retiring the previous (retired keys stay published for MaxTTL so
// tokens signed with them still verify). Any other key left unretired, for
// example by a crash between the two steps or by two replicas rotating at
// once, is retired as well. Idempotent; safe to call on every tick.
func (i *Issuer) Rotate(ctx context.Context) error {
	i.rotateMu.Lock()
	defer i.rotateMu.Unlock()
	stored, err := i.cfg.Keys.ListKeys(ctx)
	if err != nil {
		return err
	}
	now := i.cfg.Clock.Now()
	changed := false
	if len(stored) == 0 || !now.Before(stored[0].CreatedOn.Add(i.cfg.Rotation)) || stored[0].RetiredOn != nil {
		sk, err := i.generate(now)
		if err != nil {
			return err
		}
		if err := i.cfg.Keys.InsertKey(ctx, sk); err != nil {
			return err
		}
		stored = append([]*identity.SigningKey{sk}, stored...)
		changed = true
	}
	for _, sk := range stored[1:] {
		if sk.RetiredOn != nil {
			continue
		}
		retired := *sk
		t := now
		retired.RetiredOn = &t
		if err := i.cfg.Keys.UpdateKey(ctx, &retired); err != nil {
			return err
		}
		changed = true
	}
	if changed || i.keys.Load().loaded.IsZero() {
		_, err = i.refresh(ctx, true)
	}
	return err
}

// generate returns a new signing key created at now. Its ID is the key's
// RFC 7638 JWK thumbprint.
func (i *Issuer) generate(now time.Time) (*identity.SigningKey, error) {
	priv, err := rsa.GenerateKey(i.cfg.Random, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("generate workload signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode workload signing key: %w", err)
	}
	return &identity.SigningKey{
		ID:         thumbprint(&priv.PublicKey),
		PrivatePEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		CreatedOn:  now,
	}, nil
}

// signingKey returns the newest unretired key, reloading when the cached
// one is due for rotation (another replica may have rotated) and creating
// the first key when there is none.
func (i *Issuer) signingKey(ctx context.Context) (*key, error) {
	now := i.cfg.Clock.Now()
	newest := func(ks *keySet) *key {
		if len(ks.list) > 0 && ks.list[0].retired == nil {
			return ks.list[0]
		}
		return nil
	}
	ks := i.keys.Load()
	if k := newest(ks); k != nil && now.Before(k.created.Add(i.cfg.Rotation)) {
		return k, nil
	}
	ks, err := i.refresh(ctx, ks.loaded.IsZero())
	if err != nil {
		return nil, err
	}
	if k := newest(ks); k != nil {
		return k, nil
	}
	if err := i.Rotate(ctx); err != nil {
		return nil, err
	}
	if k := newest(i.keys.Load()); k != nil {
		return k, nil
	}
	return nil, core.Errorf(core.EINTERNAL, "no workload signing key is available")
}

// tokenClaims is the JWT payload as Verify reads it.
type tokenClaims struct {
	jwt.RegisteredClaims
	AppID     string `json:"appid,omitempty"`
	OID       string `json:"oid,omitempty"`
	Attempt   string `json:"shoal_attempt,omitempty"`
	Job       string `json:"shoal_job,omitempty"`
	Submitter string `json:"shoal_submitter,omitempty"`
	Binding   string `json:"shoal_binding,omitempty"`
}

// Mint signs a token for c with lifetime ttl (capped at MaxTTL; default
// MaxTTL when 0) with the newest key; "kid" header set. Returns the token
// and its expiry. Times are whole seconds, as in the token; c.ExpiresAt and
// c.IssuedAt are ignored, and c.ID is generated when empty. Subject and
// Audience are required.
func (i *Issuer) Mint(ctx context.Context, c Claims, ttl time.Duration) (token string, expires time.Time, err error) {
	if c.Subject == "" {
		return "", time.Time{}, core.FieldErrorf("subject", "a workload token needs a subject")
	}
	if c.Audience == "" {
		return "", time.Time{}, core.FieldErrorf("audience", "a workload token needs an audience (the resource it is for)")
	}
	if ttl < 0 {
		return "", time.Time{}, core.FieldErrorf("ttl", "token lifetime %s is negative", ttl)
	}
	if ttl == 0 || ttl > i.cfg.MaxTTL {
		ttl = i.cfg.MaxTTL
	}
	k, err := i.signingKey(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	if c.ID == "" {
		b := make([]byte, 16)
		if _, err := io.ReadFull(i.cfg.Random, b); err != nil {
			return "", time.Time{}, fmt.Errorf("token ID: %w", err)
		}
		c.ID = base64.RawURLEncoding.EncodeToString(b)
	}
	iat := i.cfg.Clock.Now().Truncate(time.Second)
	exp := iat.Add(ttl).Truncate(time.Second)
	claims := jwt.MapClaims{
		"iss": i.cfg.Issuer,
		"sub": c.Subject,
		"aud": c.Audience,
		"iat": iat.Unix(),
		"nbf": iat.Unix(),
		"exp": exp.Unix(),
		"jti": c.ID,
	}
	for name, v := range map[string]string{
		ClaimAppID: c.ClientID, ClaimOID: c.ClientID,
		ClaimAttempt: c.AttemptID, ClaimJob: c.Job, ClaimSubmitter: c.Submitter,
		ClaimBinding: c.Binding,
	} {
		if v != "" {
			claims[name] = v
		}
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = k.id
	token, err = t.SignedString(k.priv)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign workload token: %w", err)
	}
	return token, exp, nil
}

// errUnknownKey is returned by the key lookup for a kid that is not published.
var errUnknownKey = errors.New("unknown signing key")

// unauthorized returns the EUNAUTHORIZED error Verify reports.
func unauthorized(format string, args ...any) error {
	return core.Errorf(core.EUNAUTHORIZED, "workload token: "+format, args...)
}

// Verify checks signature (by kid, among published keys), issuer, expiry
// (with 30 s leeway at most), not-before, and that the audience is one of
// audiences; returns the claims. Errors are *shoal.Error with code
// EUNAUTHORIZED and a clear message (expired, wrong audience, unknown key,
// bad signature, malformed); a KeyStore failure while looking up an unknown
// key is returned as is. Only RS256 is accepted (reject "none" and HS*:
// algorithm confusion).
func (i *Issuer) Verify(ctx context.Context, token string, audiences []string) (*Claims, error) {
	if len(audiences) == 0 {
		return nil, unauthorized("no audience is accepted here")
	}
	if len(token) > maxTokenLen {
		return nil, unauthorized("malformed: longer than %d bytes", maxTokenLen)
	}
	var storeErr error
	keyFunc := func(t *jwt.Token) (any, error) {
		if m, ok := t.Method.(*jwt.SigningMethodRSA); !ok || m.Alg() != Algorithm {
			return nil, fmt.Errorf("algorithm %v is not accepted", t.Header["alg"])
		}
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errUnknownKey
		}
		now := i.cfg.Clock.Now()
		k := i.keys.Load().byID[kid]
		if k == nil {
			ks, err := i.refresh(ctx, false)
			if err != nil {
				storeErr = err
				return nil, err
			}
			k = ks.byID[kid]
		}
		if k == nil || !i.published(k, now) {
			return nil, errUnknownKey
		}
		return &k.priv.PublicKey, nil
	}
	var tc tokenClaims
	parsed, err := jwt.ParseWithClaims(token, &tc, keyFunc,
		jwt.WithValidMethods([]string{Algorithm}),
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(i.cfg.Clock.Now),
		jwt.WithLeeway(Leeway),
		jwt.WithIssuer(i.cfg.Issuer),
		jwt.WithAudience(audiences...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	)
	if err != nil {
		if storeErr != nil {
			return nil, storeErr
		}
		if parsed != nil && parsed.Method != nil && parsed.Method.Alg() != Algorithm {
			return nil, unauthorized("signing algorithm %q is not accepted; only %s is", parsed.Method.Alg(), Algorithm)
		}
		return nil, verifyError(err, &tc)
	}
	if tc.Subject == "" {
		return nil, unauthorized("malformed: no subject")
	}
	c := &Claims{
		Subject:   tc.Subject,
		ClientID:  tc.AppID,
		AttemptID: tc.Attempt,
		Job:       tc.Job,
		Submitter: tc.Submitter,
		Binding:   tc.Binding,
		ID:        tc.ID,
	}
	for _, a := range tc.Audience {
		if slices.Contains(audiences, a) {
			c.Audience = a
			break
		}
	}
	if tc.ExpiresAt != nil {
		c.ExpiresAt = tc.ExpiresAt.Time
	}
	if tc.IssuedAt != nil {
		c.IssuedAt = tc.IssuedAt.Time
	}
	return c, nil
}

// verifyError turns a jwt parse error into an EUNAUTHORIZED *shoal.Error
// with a message saying what is wrong. The order matters: the jwt errors
// wrap several sentinels.
func verifyError(err error, tc *tokenClaims) error {
	switch {
	case errors.Is(err, errUnknownKey):
		return unauthorized("signed by an unknown or retired key")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return unauthorized("malformed: not a valid JWT")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// An alg the jwt package does not know.
		return unauthorized("signing algorithm is not accepted; only %s is", Algorithm)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return unauthorized("bad signature")
	case errors.Is(err, jwt.ErrTokenExpired):
		if tc.ExpiresAt != nil {
			return unauthorized("expired at %s", tc.ExpiresAt.UTC().Format(time.RFC3339))
		}
		return unauthorized("expired")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return unauthorized("audience %q is not accepted here", strings.Join(tc.Audience, ", "))
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return unauthorized("issuer %q is not this server", tc.Issuer)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return unauthorized("not valid yet")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return unauthorized("issued in the future")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return unauthorized("malformed: a required claim is missing")
	default:
		return unauthorized("malformed: invalid claims")
	}
}

// jwk is one RSA public key in a JWK Set.
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// JWKS returns the published public keys as a JWK Set document
// ({"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid","n","e"}]}) —
// current and retired-but-still-valid keys, newest first. The keys are
// reloaded from the KeyStore at most once per second.
func (i *Issuer) JWKS(ctx context.Context) ([]byte, error) {
	ks, err := i.refresh(ctx, false)
	if err != nil {
		return nil, err
	}
	now := i.cfg.Clock.Now()
	doc := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, k := range ks.list {
		if !i.published(k, now) {
			continue
		}
		pub := &k.priv.PublicKey
		doc.Keys = append(doc.Keys, jwk{
			Kty: "RSA", Use: "sig", Alg: Algorithm, Kid: k.id,
			N: b64(pub.N.Bytes()), E: b64(big.NewInt(int64(pub.E)).Bytes()),
		})
	}
	return json.Marshal(doc)
}

// IssuerURL is the "iss" of the tokens this issuer mints.
func (i *Issuer) IssuerURL() string { return i.cfg.Issuer }

// Discovery returns the /.well-known/openid-configuration document: issuer,
// jwks_uri (issuer + "/.well-known/jwks.json"), id_token_signing_alg_values_supported
// ["RS256"], response_types_supported ["id_token"], subject_types_supported
// ["public"], scopes_supported ["openid"], claims_supported.
func (i *Issuer) Discovery() ([]byte, error) {
	return json.Marshal(struct {
		Issuer          string   `json:"issuer"`
		JWKSURI         string   `json:"jwks_uri"`
		Algs            []string `json:"id_token_signing_alg_values_supported"`
		ResponseTypes   []string `json:"response_types_supported"`
		SubjectTypes    []string `json:"subject_types_supported"`
		Scopes          []string `json:"scopes_supported"`
		ClaimsSupported []string `json:"claims_supported"`
	}{
		Issuer:        i.cfg.Issuer,
		JWKSURI:       strings.TrimRight(i.cfg.Issuer, "/") + JWKSPath,
		Algs:          []string{Algorithm},
		ResponseTypes: []string{"id_token"},
		SubjectTypes:  []string{"public"},
		Scopes:        []string{"openid"},
		ClaimsSupported: []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti",
			ClaimAppID, ClaimOID, ClaimAttempt, ClaimJob, ClaimSubmitter, ClaimBinding},
	})
}

// LooksLikeJWT reports whether a bearer token is a JWT (three base64url
// parts, the first a JSON object), so the API can route it to Verify
// instead of the API-token lookup. Shoal API tokens never contain a dot.
func LooksLikeJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "eyJ") { // base64url of `{"`
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for _, r := range p {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// parsePrivateKey reads an RSA private key from PEM (PKCS #8 or PKCS #1).
func parsePrivateKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%T is not an RSA key", k)
		}
		return rk, nil
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
	}
}

// thumbprint returns the RFC 7638 JWK thumbprint of pub (base64url SHA-256
// of its canonical JWK), used as the kid.
func thumbprint(pub *rsa.PublicKey) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"e":%q,"kty":"RSA","n":%q}`, b64(big.NewInt(int64(pub.E)).Bytes()), b64(pub.N.Bytes()))
	sum := sha256.Sum256(buf.Bytes())
	return b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

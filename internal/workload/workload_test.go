package workload_test

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/workload"
)

const issuerURL = "https://shoal.example.com"

// memKeys is an in-memory KeyStore that counts ListKeys calls.
type memKeys struct {
	mu    sync.Mutex
	keys  []identity.SigningKey
	lists int
}

func (m *memKeys) ListKeys(ctx context.Context) ([]*identity.SigningKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists++
	out := make([]*identity.SigningKey, len(m.keys))
	for i := range m.keys {
		k := m.keys[i]
		out[i] = &k
	}
	slices.SortStableFunc(out, func(a, b *identity.SigningKey) int { return b.CreatedOn.Compare(a.CreatedOn) })
	return out, nil
}

func (m *memKeys) InsertKey(ctx context.Context, k *identity.SigningKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.keys {
		if e.ID == k.ID {
			return core.Errorf(core.ECONFLICT, "key %s exists", k.ID)
		}
	}
	m.keys = append(m.keys, *k)
	return nil
}

func (m *memKeys) UpdateKey(ctx context.Context, k *identity.SigningKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, e := range m.keys {
		if e.ID == k.ID {
			m.keys[i] = *k
			return nil
		}
	}
	return core.Errorf(core.ENOTFOUND, "no key %s", k.ID)
}

func (m *memKeys) listCalls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lists
}

type fixture struct {
	iss   *workload.Issuer
	keys  *memKeys
	clock *coretest.Clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{keys: &memKeys{}, clock: coretest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	f.iss = workload.New(workload.Config{Keys: f.keys, Clock: f.clock, Issuer: issuerURL, Rotation: 24 * time.Hour, MaxTTL: time.Hour})
	if err := f.iss.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) mint(t *testing.T, aud string, ttl time.Duration) string {
	t.Helper()
	tok, _, err := f.iss.Mint(context.Background(), workload.Claims{Subject: "identity:trainer", Audience: aud, ClientID: "cid"}, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var audiences = []string{"https://management.azure.com/", "https://storage.azure.com/"}

func wantUnauthorized(t *testing.T, err error, substr string) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *shoal.Error", err, err)
	}
	if e.Code != core.EUNAUTHORIZED {
		t.Fatalf("code %q, want %q (%s)", e.Code, core.EUNAUTHORIZED, e.Message)
	}
	if !strings.Contains(e.Message, substr) {
		t.Fatalf("message %q does not mention %q", e.Message, substr)
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func decodePart(t *testing.T, s string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encodePart(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b64(b)
}

func TestMintVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	in := workload.Claims{
		Subject: "identity:ws/compute", Audience: audiences[1], ClientID: "0b5c-client",
		AttemptID: "att-7", Job: "ws/train-1", Submitter: "user:alice",
	}
	now := f.clock.Now()
	tok, exp, err := f.iss.Mint(ctx, in, 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(20 * time.Minute)) {
		t.Errorf("expires %s, want %s", exp, now.Add(20*time.Minute))
	}
	if !workload.LooksLikeJWT(tok) {
		t.Errorf("minted token does not look like a JWT")
	}
	parts := strings.Split(tok, ".")
	hdr, payload := decodePart(t, parts[0]), decodePart(t, parts[1])
	if hdr["alg"] != "RS256" || hdr["kid"] == nil || hdr["kid"] == "" {
		t.Errorf("header %v", hdr)
	}
	for name, want := range map[string]string{
		"iss": issuerURL, "sub": in.Subject, "aud": in.Audience, "appid": in.ClientID, "oid": in.ClientID,
		"shoal_attempt": in.AttemptID, "shoal_job": in.Job, "shoal_submitter": in.Submitter,
	} {
		if payload[name] != want {
			t.Errorf("claim %s = %v, want %q", name, payload[name], want)
		}
	}
	if payload["jti"] == nil || payload["jti"] == "" {
		t.Errorf("no jti: %v", payload)
	}

	got, err := f.iss.Verify(ctx, tok, audiences)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ExpiresAt, want.IssuedAt, want.ID = exp, now, payload["jti"].(string)
	if !got.ExpiresAt.Equal(want.ExpiresAt) || !got.IssuedAt.Equal(want.IssuedAt) {
		t.Errorf("times: got exp %s iat %s, want %s %s", got.ExpiresAt, got.IssuedAt, want.ExpiresAt, want.IssuedAt)
	}
	got.ExpiresAt, got.IssuedAt, want.ExpiresAt, want.IssuedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if *got != want {
		t.Errorf("claims\n got %+v\nwant %+v", *got, want)
	}

	// Two tokens get distinct IDs.
	tok2, _, err := f.iss.Mint(ctx, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if decodePart(t, strings.Split(tok2, ".")[1])["jti"] == payload["jti"] {
		t.Errorf("jti reused")
	}
}

func TestMintCreatesFirstKeyAndValidates(t *testing.T) {
	keys := &memKeys{}
	clock := coretest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	iss := workload.New(workload.Config{Keys: keys, Clock: clock, Issuer: issuerURL})
	ctx := context.Background()
	tok, _, err := iss.Mint(ctx, workload.Claims{Subject: "identity:x", Audience: "api://a"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Verify(ctx, tok, []string{"api://a"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := iss.Mint(ctx, workload.Claims{Audience: "api://a"}, 0); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("no subject: %v", err)
	}
	if _, _, err := iss.Mint(ctx, workload.Claims{Subject: "identity:x"}, 0); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("no audience: %v", err)
	}
	if _, err := iss.Verify(ctx, tok, nil); err == nil {
		t.Errorf("verified with no acceptable audience")
	}
}

func TestTTLCappedAtMaxTTL(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clock.Now()
	for _, ttl := range []time.Duration{10 * time.Hour, 0} {
		tok, exp, err := f.iss.Mint(ctx, workload.Claims{Subject: "identity:trainer", Audience: audiences[0]}, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.Equal(now.Add(time.Hour)) {
			t.Errorf("ttl %s: expires %s, want %s", ttl, exp, now.Add(time.Hour))
		}
		c, err := f.iss.Verify(ctx, tok, audiences)
		if err != nil {
			t.Fatal(err)
		}
		if !c.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Errorf("ttl %s: exp claim %s", ttl, c.ExpiresAt)
		}
	}
}

func TestExpiredTokenRefused(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, audiences[0], 5*time.Minute)
	f.clock.Advance(5*time.Minute + 20*time.Second) // within the leeway
	if _, err := f.iss.Verify(context.Background(), tok, audiences); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	f.clock.Advance(11 * time.Second)
	_, err := f.iss.Verify(context.Background(), tok, audiences)
	wantUnauthorized(t, err, "expired")
}

func TestNotYetValidRefused(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, audiences[0], 0)
	f.clock.Advance(-2 * time.Minute)
	_, err := f.iss.Verify(context.Background(), tok, audiences)
	wantUnauthorized(t, err, "")
}

func TestWrongAudienceRefused(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, "https://vault.azure.net", 0)
	_, err := f.iss.Verify(context.Background(), tok, audiences)
	wantUnauthorized(t, err, "audience")
}

func TestWrongIssuerRefused(t *testing.T) {
	f := newFixture(t)
	other := workload.New(workload.Config{Keys: f.keys, Clock: f.clock, Issuer: "https://other.example.com"})
	tok, _, err := other.Mint(context.Background(), workload.Claims{Subject: "identity:x", Audience: audiences[0]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.iss.Verify(context.Background(), tok, audiences)
	wantUnauthorized(t, err, "issuer")
}

func TestUnknownKeyRefused(t *testing.T) {
	f := newFixture(t)
	g := newFixture(t) // same issuer URL, its own keys
	tok := g.mint(t, audiences[0], 0)
	_, err := f.iss.Verify(context.Background(), tok, audiences)
	wantUnauthorized(t, err, "unknown")

	// Unknown kids reload keys at most once per second.
	before := f.keys.listCalls()
	for range 20 {
		_, err := f.iss.Verify(context.Background(), tok, audiences)
		wantUnauthorized(t, err, "unknown")
	}
	if n := f.keys.listCalls() - before; n > 1 {
		t.Errorf("%d key reloads within one second", n)
	}
	// Known kids never hit the store.
	own := f.mint(t, audiences[0], 0)
	before = f.keys.listCalls()
	for range 20 {
		if _, err := f.iss.Verify(context.Background(), own, audiences); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.keys.listCalls() - before; n != 0 {
		t.Errorf("%d key reloads for a known key", n)
	}
}

func TestTamperedTokenRefused(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, audiences[0], 0)
	parts := strings.Split(tok, ".")
	payload := decodePart(t, parts[1])
	payload["sub"] = "identity:admin"
	tampered := parts[0] + "." + encodePart(t, payload) + "." + parts[2]
	_, err := f.iss.Verify(context.Background(), tampered, audiences)
	wantUnauthorized(t, err, "bad signature")

	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[10] ^= 1
	_, err = f.iss.Verify(context.Background(), parts[0]+"."+parts[1]+"."+b64(sig), audiences)
	wantUnauthorized(t, err, "bad signature")

	for _, bad := range []string{"", "abc", "a.b.c", parts[0] + "." + parts[1], tok + ".x", "eyJ!.e.e"} {
		_, err := f.iss.Verify(context.Background(), bad, audiences)
		wantUnauthorized(t, err, "malformed")
	}
}

func TestAlgorithmConfusionRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok := f.mint(t, audiences[0], 0)
	parts := strings.Split(tok, ".")
	hdr := decodePart(t, parts[0])

	// alg "none", no signature.
	hdr["alg"] = "none"
	none := encodePart(t, hdr) + "." + parts[1] + "."
	_, err := f.iss.Verify(ctx, none, audiences)
	wantUnauthorized(t, err, "algorithm")

	// HS256 keyed with the public key, the classic confusion attack.
	jwks := parseJWKS(t, f.iss)
	pub := jwks[hdr["kid"].(string)]
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hdr["alg"] = "HS256"
	for _, secret := range [][]byte{pubPEM, der, pub.N.Bytes()} {
		signing := encodePart(t, hdr) + "." + parts[1]
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(signing))
		_, err = f.iss.Verify(ctx, signing+"."+b64(mac.Sum(nil)), audiences)
		wantUnauthorized(t, err, "algorithm")
	}

	// PS256 and an unheard-of alg are refused too.
	for _, alg := range []string{"PS256", "RS512", "XX999"} {
		hdr["alg"] = alg
		_, err = f.iss.Verify(ctx, encodePart(t, hdr)+"."+parts[1]+"."+parts[2], audiences)
		wantUnauthorized(t, err, "algorithm")
	}
}

func TestRotation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	kidOf := func(tok string) string { return decodePart(t, strings.Split(tok, ".")[0])["kid"].(string) }

	// A replica sharing the store, loaded before the rotation.
	replica := workload.New(workload.Config{Keys: f.keys, Clock: f.clock, Issuer: issuerURL, Rotation: 24 * time.Hour, MaxTTL: time.Hour})
	old := f.mint(t, audiences[0], 0)
	if _, err := replica.Verify(ctx, old, audiences); err != nil {
		t.Fatal(err)
	}

	// Ticking before Rotation changes nothing.
	f.clock.Advance(23*time.Hour + 59*time.Minute)
	if err := f.iss.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(f.keys.keys); n != 1 {
		t.Fatalf("%d keys before rotation", n)
	}
	old = f.mint(t, audiences[0], time.Hour) // expires 59 min after retirement
	oldKid := kidOf(old)

	f.clock.Advance(time.Minute)
	for range 3 { // idempotent
		if err := f.iss.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.keys.keys); n != 2 {
		t.Fatalf("%d keys after rotation, want 2", n)
	}
	fresh := f.mint(t, audiences[0], 0)
	if kidOf(fresh) == oldKid {
		t.Fatalf("still signing with the retired key")
	}
	if got := jwksKids(t, f.iss); !slices.Equal(got, []string{kidOf(fresh), oldKid}) {
		t.Errorf("JWKS kids %v, want new and old", got)
	}
	for _, iss := range []*workload.Issuer{f.iss, replica} {
		for _, tok := range []string{old, fresh} {
			if _, err := iss.Verify(ctx, tok, audiences); err != nil {
				t.Fatalf("after rotation: %v", err)
			}
		}
	}
	// The replica signs with the new key too.
	tok, _, err := replica.Mint(ctx, workload.Claims{Subject: "identity:x", Audience: audiences[0]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if kidOf(tok) != kidOf(fresh) {
		t.Errorf("replica signs with %s, want %s", kidOf(tok), kidOf(fresh))
	}

	// Old tokens verify until they expire, MaxTTL after retirement at most.
	f.clock.Advance(58 * time.Minute)
	if _, err := f.iss.Verify(ctx, old, audiences); err != nil {
		t.Fatalf("58 min after retirement: %v", err)
	}

	// Then the old key leaves the JWKS and its tokens fail.
	f.clock.Advance(2*time.Minute + workload.Leeway + time.Second)
	if got := jwksKids(t, f.iss); !slices.Equal(got, []string{kidOf(fresh)}) {
		t.Errorf("JWKS kids %v, want only the new one", got)
	}
	for _, iss := range []*workload.Issuer{f.iss, replica} {
		_, err := iss.Verify(ctx, old, audiences)
		wantUnauthorized(t, err, "unknown")
	}
	if _, err := f.iss.Verify(ctx, f.mint(t, audiences[0], 0), audiences); err != nil {
		t.Fatal(err)
	}
}

// parseJWKS reads the issuer's JWK Set, checking every key, and returns the
// public keys by kid.
func parseJWKS(t *testing.T, iss *workload.Issuer) map[string]*rsa.PublicKey {
	t.Helper()
	doc, err := iss.JWKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatal(err)
	}
	out := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k["kty"] != "RSA" || k["use"] != "sig" || k["alg"] != "RS256" || k["kid"] == "" {
			t.Fatalf("bad JWK %v", k)
		}
		if _, ok := k["d"]; ok {
			t.Fatalf("JWK publishes the private exponent")
		}
		n, err := base64.RawURLEncoding.DecodeString(k["n"])
		if err != nil {
			t.Fatal(err)
		}
		e, err := base64.RawURLEncoding.DecodeString(k["e"])
		if err != nil {
			t.Fatal(err)
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() != 2048 || pub.E != 65537 {
			t.Fatalf("key %s: %d bits, e=%d", k["kid"], pub.N.BitLen(), pub.E)
		}
		out[k["kid"]] = pub
	}
	return out
}

func jwksKids(t *testing.T, iss *workload.Issuer) []string {
	t.Helper()
	doc, err := iss.JWKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

func TestJWKSVerifiesMintedToken(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, audiences[0], 0)
	keys := parseJWKS(t, f.iss)
	if len(keys) != 1 {
		t.Fatalf("%d keys published", len(keys))
	}
	parts := strings.Split(tok, ".")
	pub := keys[decodePart(t, parts[0])["kid"].(string)]
	if pub == nil {
		t.Fatalf("token's kid is not in the JWKS")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
		t.Fatalf("JWKS key does not verify the token: %v", err)
	}
}

func TestDiscovery(t *testing.T) {
	f := newFixture(t)
	doc, err := f.iss.Discovery()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		Algs          []string `json:"id_token_signing_alg_values_supported"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		Claims        []string `json:"claims_supported"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if d.Issuer != issuerURL || d.JWKSURI != issuerURL+"/.well-known/jwks.json" {
		t.Errorf("issuer %q jwks_uri %q", d.Issuer, d.JWKSURI)
	}
	if !slices.Equal(d.Algs, []string{"RS256"}) || !slices.Equal(d.ResponseTypes, []string{"id_token"}) ||
		!slices.Equal(d.SubjectTypes, []string{"public"}) {
		t.Errorf("document %s", doc)
	}
	for _, c := range []string{"iss", "sub", "aud", "exp", "iat", "appid", "oid", "shoal_attempt", "shoal_job", "shoal_submitter"} {
		if !slices.Contains(d.Claims, c) {
			t.Errorf("claims_supported lacks %s", c)
		}
	}
}

func TestLooksLikeJWT(t *testing.T) {
	f := newFixture(t)
	tok := f.mint(t, audiences[0], 0)
	apiToken, _, err := identity.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		tok:                    true,
		apiToken:               false,
		"":                     false,
		"a.b.c":                false,
		"eyJhbGciOi.e30.":      false,
		"eyJhbGciOi.e30.sig":   true,
		"eyJhbGciOi.e3+0.sig":  false,
		"eyJhbGciOi.e30.sig.x": false,
		"shoal_abc.def.ghi":    false,
	} {
		if got := workload.LooksLikeJWT(s); got != want {
			t.Errorf("LooksLikeJWT(%q) = %v, want %v", s, got, want)
		}
	}
}

package blobs

import (
	"crypto/hmac"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// SAS is what a shared access signature Shoal signs grants: operations
// (Perms, Azure's letters: r read, a add, c create, w write, l list) on
// the blobs of one workspace's container whose names start with Prefix
// ("" for the whole container), until Expiry. The workspace travels in
// the signature as its tenant (sktid) and the folder as its identifier
// (si): every workspace's workspaceblobstore is reached at the same
// account URL, and Azure's Python client takes a query for a SAS only
// when every parameter is one of Azure's SAS parameters.
type SAS struct {
	Workspace string
	// Created is the workspace's creation time (core.Workspace.CreatedOn),
	// which the signature covers without the query saying it: a
	// workspace deleted and created again under its name is another
	// workspace (other members, other blobs), which no SAS of the first
	// reaches.
	Created   time.Time
	Container string
	Prefix    string
	Perms     string
	Expiry    time.Time
}

// sasVersion is the storage service version the signature says (sv):
// Azure's clients read it back only to show it.
const sasVersion = "2021-08-06"

// sasPurpose keys the signature apart from the server's other MACs.
const sasPurpose = "blob-sas/v1"

// Sign returns the SAS as Azure's query parameters (sv, sr, sp, se, sktid
// and si), with sig an HMAC-SHA256 under the server's
// secrets key of everything it grants.
func (s *Service) Sign(g SAS) url.Values {
	q := url.Values{}
	q.Set("sv", sasVersion)
	q.Set("sr", "c")
	q.Set("sp", g.Perms)
	q.Set("se", g.Expiry.UTC().Format(time.RFC3339))
	q.Set("sktid", strings.ToLower(g.Workspace))
	if g.Prefix != "" {
		q.Set("si", g.Prefix)
	}
	q.Set("sig", base64.StdEncoding.EncodeToString(s.key.MAC(sasPurpose, sasMessage(strings.ToLower(g.Workspace), g.Created, strings.ToLower(g.Container), g.Prefix, g.Perms, q.Get("se")))))
	return q
}

// SignString is Sign encoded as a query string (what listSecrets answers
// as a sasToken and a sasUri carries).
func (s *Service) SignString(g SAS) string { return s.Sign(g).Encode() }

// sasMessage is what the signature covers, each field on a line of its
// own so that no field's text can stand for another's.
func sasMessage(ws string, created time.Time, container, prefix, perms, expiry string) []byte {
	return []byte(strings.Join([]string{ws, strconv.FormatInt(created.UnixMicro(), 10), container, prefix, perms, expiry}, "\n"))
}

// Verify checks a request's SAS (its query) for operation perm on blob
// of container (blob "" for the container itself: a list) and returns
// what it grants. A missing, forged or expired signature is
// EUNAUTHENTICATED; one for another container, another blob or without
// perm is EFORBIDDEN. The answer never says which field was forged.
func (s *Service) Verify(q url.Values, container, blob string, perm byte) (*SAS, error) {
	g, err := s.Check(q, container)
	if err != nil {
		return nil, err
	}
	if !strings.ContainsRune(g.Perms, rune(perm)) {
		return nil, core.Errorf(core.EFORBIDDEN, "the shared access signature does not grant %q (it grants %q)", string(perm), g.Perms)
	}
	if g.Prefix != "" && !strings.HasPrefix(blob, g.Prefix) {
		return nil, core.Errorf(core.EFORBIDDEN, "the shared access signature is for blobs under %q only", g.Prefix)
	}
	return g, nil
}

// Check checks that a request's SAS is Shoal's, for container, and not
// expired, and returns what it grants (Verify's first half: the front
// door admits a request on it before its body is read).
func (s *Service) Check(q url.Values, container string) (*SAS, error) {
	sig := q.Get("sig")
	if sig == "" {
		return nil, core.Errorf(core.EUNAUTHORIZED, "no shared access signature: ask listSecrets of the datastore (or startPendingUpload of a code version) for one")
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the signature (sig) is not base64")
	}
	g := &SAS{Workspace: q.Get("sktid"), Container: strings.ToLower(container), Prefix: q.Get("si"), Perms: q.Get("sp")}
	if g.Workspace == "" || q.Get("se") == "" {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the shared access signature has no workspace (sktid) or expiry (se)")
	}
	exp, err := time.Parse(time.RFC3339, q.Get("se"))
	if err != nil {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the expiry (se) is not an RFC 3339 time")
	}
	if !s.now().Before(exp) {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the shared access signature expired at %s: ask for a new one", exp.UTC().Format(time.RFC3339))
	}
	// The workspace as it is now: a SAS of a deleted one, or of an
	// earlier workspace of the name, does not match it. Read last but
	// for the signature: an anonymous request costs a store read only
	// with a SAS that could be good.
	created, err := s.created(g.Workspace)
	if err != nil {
		return nil, err
	}
	g.Created = created
	want := s.key.MAC(sasPurpose, sasMessage(g.Workspace, created, g.Container, g.Prefix, g.Perms, q.Get("se")))
	if !hmac.Equal(got, want) {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the signature does not match what it grants (a changed field, another container, a workspace deleted and created again since, or a signature of another server)")
	}
	g.Expiry = exp
	return g, nil
}

// created returns a workspace's creation time, which its SAS are signed
// with; a workspace that does not exist (any more) is EUNAUTHORIZED, as
// a forged signature.
func (s *Service) created(ws string) (time.Time, error) {
	w, err := s.findWorkspace(ws)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return time.Time{}, core.Errorf(core.EUNAUTHORIZED, "the shared access signature's workspace does not exist (any more)")
	} else if err != nil {
		return time.Time{}, err
	}
	return w.CreatedOn, nil
}

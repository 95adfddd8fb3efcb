package blobs

import (
	"net/url"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/sealing"
)

// A SAS checks only as signed: every field it grants is covered by the
// signature (a changed workspace, folder, permission or expiry fails), it
// fails once expired by the injected clock, and it grants only its
// permissions on its container and folder.
func TestSAS(t *testing.T) {
	key, err := sealing.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := New(Config{Key: key, Now: func() time.Time { return now }})
	g := SAS{Workspace: "Vision", Container: "workspaceblobstore", Prefix: "LocalUpload/ab/", Perms: "rl", Expiry: now.Add(time.Hour)}
	q := s.Sign(g)
	got, err := s.Verify(q, "workspaceblobstore", "LocalUpload/ab/x.py", 'r')
	if err != nil || got.Workspace != "vision" || got.Prefix != "LocalUpload/ab/" {
		t.Fatalf("Verify = %+v, %v", got, err)
	}
	changed := func(k, v string) url.Values {
		c := url.Values{}
		for kk, vv := range q {
			c[kk] = vv
		}
		c.Set(k, v)
		return c
	}
	for name, bad := range map[string]url.Values{
		"workspace": changed("sktid", "other"), "folder": changed("si", ""), "perms": changed("sp", "racwl"),
		"expiry": changed("se", now.Add(48*time.Hour).Format(time.RFC3339)), "sig": changed("sig", "AAAA"), "no sig": changed("sig", ""),
	} {
		if _, err := s.Verify(bad, "workspaceblobstore", "LocalUpload/ab/x.py", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Errorf("%s changed: %v, want EUNAUTHORIZED", name, err)
		}
	}
	if _, err := s.Verify(q, "workspaceartifactstore", "LocalUpload/ab/x.py", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("another container: %v", err)
	}
	if _, err := s.Verify(q, "workspaceblobstore", "LocalUpload/ab/x.py", 'w'); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("a write with an rl SAS: %v", err)
	}
	if _, err := s.Verify(q, "workspaceblobstore", "LocalUpload/abc/x.py", 'r'); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("a blob outside the folder: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Verify(q, "workspaceblobstore", "LocalUpload/ab/x.py", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("at its expiry: %v", err)
	}
	other, _ := sealing.New([]byte("0123456789abcdef0123456789abcdef"))
	if _, err := New(Config{Key: other, Now: func() time.Time { return now.Add(-time.Minute) }}).Verify(q, "workspaceblobstore", "LocalUpload/ab/x.py", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("another server's key: %v", err)
	}
}

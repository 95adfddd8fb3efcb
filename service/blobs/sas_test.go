package blobs

import (
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
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
	db := testStore(t, func() time.Time { return now })
	ws := &core.Workspace{Name: "vision", Location: "local"}
	if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.InsertWorkspace(ws) }); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Store: db, Key: key, Now: func() time.Time { return now }})
	g := SAS{Workspace: "Vision", Created: now, Container: "workspaceblobstore", Prefix: "LocalUpload/ab/", Perms: "rl", Expiry: now.Add(time.Hour)}
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
	if _, err := New(Config{Store: db, Key: other, Now: func() time.Time { return now.Add(-time.Minute) }}).Verify(q, "workspaceblobstore", "LocalUpload/ab/x.py", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("another server's key: %v", err)
	}
}

// testStore is a SQLite store in a test's directory on clock.
func testStore(t *testing.T, clock clockFunc) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// clockFunc is a core.Clock of a test's own time.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// A SAS signed for a workspace does not reach the workspace created
// again under its name after the first was deleted: the second is
// another workspace (its own members, its own blobs), whoever held the
// first's SAS.
func TestSASOfARecreatedWorkspace(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := clockFunc(func() time.Time { return now })
	db := testStore(t, clock)
	key, err := sealing.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Store: db, Key: key, Now: clock.Now})
	create := func() *core.Workspace {
		t.Helper()
		ws := &core.Workspace{Name: "vision", Location: "local"}
		if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.InsertWorkspace(ws) }); err != nil {
			t.Fatal(err)
		}
		var got *core.Workspace
		if err := db.View(t.Context(), func(tx store.Tx) (err error) { got, err = tx.GetWorkspace("vision"); return err }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := create()
	q := s.Sign(SAS{Workspace: "vision", Created: first.CreatedOn, Container: "workspaceblobstore", Perms: "racwl", Expiry: now.Add(time.Hour)})
	if _, err := s.Verify(q, "workspaceblobstore", "x", 'r'); err != nil {
		t.Fatalf("the SAS of the workspace it was signed for: %v", err)
	}
	if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteWorkspace("vision") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(q, "workspaceblobstore", "x", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("the SAS of a deleted workspace: %v, want EUNAUTHORIZED", err)
	}
	now = now.Add(time.Second)
	create()
	if _, err := s.Verify(q, "workspaceblobstore", "x", 'r'); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("the first workspace's SAS on the one created again under its name: %v, want EUNAUTHORIZED", err)
	}
}

package postgres_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store/postgres"
)

// Files in the database: artifacts larger than a chunk round-trip and are
// content-addressed, a log written at offsets (retries included) reads
// back whole and seeks, outputs are replaced whole, bad names and
// oversized uploads are refused, an instance's files go with it.
func TestFiles(t *testing.T) {
	pg := testpg.Start(t)
	db, err := postgres.Open(t.Context(), postgres.Config{URL: pg.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := db.Files()
	big := make([]byte, 5<<20+123)
	rand.Read(big)
	id, err := f.PutArtifact("default", bytes.NewReader(big), 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := f.PutArtifact("default", bytes.NewReader(big), 10<<20); err != nil || again != id {
		t.Fatalf("the same content again: %s %v; want %s", again, err, id)
	}
	r, err := f.OpenArtifact("default", id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, big) || !f.HasArtifact("default", id) {
		t.Fatalf("artifact read back %d bytes of %d", len(got), len(big))
	}
	if _, err := f.PutArtifact("default", bytes.NewReader(big), 1<<20); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("an oversized upload: %v", err)
	}
	empty, err := f.PutArtifact("default", strings.NewReader(""), 10)
	if err != nil || !f.HasArtifact("default", empty) {
		t.Fatalf("an empty artifact: %v", err)
	}
	if _, err := f.OpenArtifact("default", "sha256:"+strings.Repeat("0", 64)); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("a missing artifact: %v", err)
	}
	// The workspace's artifacts count in its storage use, not another's.
	if n, err := f.Usage("default"); err != nil || n != int64(len(big)) {
		t.Fatalf("usage of default: %d %v; want %d", n, err, len(big))
	}
	if n, err := f.Usage("other"); err != nil || n != 0 {
		t.Fatalf("usage of other: %d %v", n, err)
	}
	// Another workspace neither has nor opens it.
	if _, err := f.OpenArtifact("other", id); f.HasArtifact("other", id) || core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("another workspace's artifact: %v", err)
	}

	// A log uploaded in pieces, one piece retried with more bytes.
	for _, w := range []struct {
		off  int64
		data string
	}{{0, "hello "}, {6, "wor"}, {6, "world\n"}, {12, "bye\n"}} {
		if err := f.WriteLog("Default", "j1", 1, 0, w.off, []byte(w.data)); err != nil {
			t.Fatal(err)
		}
	}
	lr, err := f.OpenLog("default", "j1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(lr)
	if string(all) != "hello world\nbye\n" {
		t.Fatalf("log %q", all)
	}
	if _, err := lr.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(lr)
	if end, _ := lr.Seek(0, io.SeekEnd); string(rest) != "world\nbye\n" || end != 16 {
		t.Fatalf("after seeking to 6: %q; end %d", rest, end)
	}
	lr.Close()

	// Outputs replace earlier ones whole.
	for _, o := range []string{"first archive, longer", "second"} {
		if err := f.PutOutputs("default", "j1", 1, 0, strings.NewReader(o), 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	or, err := f.OpenOutputs("default", "j1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(or); string(b) != "second" || !f.HasOutputs("default", "j1", 1, 0) || f.HasOutputs("default", "j1", 2, 0) {
		t.Fatalf("outputs %q", b)
	}
	for _, bad := range []string{"../etc", "a/b", ""} {
		if err := f.WriteLog(bad, "j", 1, 0, 0, []byte("x")); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("workspace %q: %v", bad, err)
		}
	}
	// An instance's setup log, then its files removed; a neighbour's stay.
	for _, inst := range []string{"box", "box2"} {
		if err := f.WriteInstanceLog("default", inst, 0, []byte("setup of "+inst)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.RemoveInstanceFiles("default", "box"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.OpenInstanceLog("default", "box"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a removed instance's log: %v", err)
	}
	if r, err := f.OpenInstanceLog("default", "box2"); err != nil {
		t.Errorf("the other instance's log: %v", err)
	} else {
		r.Close()
	}
	// The workspace's storage use counts its logs and setup logs with its
	// artifacts and outputs: the log's 16 bytes, the outputs that
	// replaced the first, the remaining instance's setup log.
	want := int64(len(big)) + 16 + int64(len("second")) + int64(len("setup of box2"))
	if n, err := f.Usage("Default"); err != nil || n != want {
		t.Errorf("usage of default: %d %v; want %d", n, err, want)
	}
	if n, err := f.Usage("other"); err != nil || n != 0 {
		t.Errorf("usage of other: %d %v", n, err)
	}
}

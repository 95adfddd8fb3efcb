package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// A store URL Shoal cannot use is refused naming the field and the forms
// it takes, without its password; sqlite:/// opens the file it names.
func TestOpenStore(t *testing.T) {
	for _, raw := range []string{"mysql://u:hunter2@h/db", "sqlite://relative.db", "sqlite:///", "postgres://"} {
		_, _, err := openStore(t.Context(), raw, t.TempDir(), nil, nil)
		if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "store") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v; want EINVALID naming store, no password", raw, err)
		}
	}
	path := filepath.Join(t.TempDir(), "x", "shoal.db")
	s, where, err := openStore(t.Context(), "sqlite://"+path, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if where != "sqlite://"+path {
		t.Errorf("where = %q", where)
	}
}

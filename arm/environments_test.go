package arm

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// pageKeys continues after the token's key and keeps the list's query in
// the nextLink; a token naming nothing listed is refused.
func TestPageKeys(t *testing.T) {
	keys := []string{"5", "4", "3", "2", "1"}
	r := httptest.NewRequest("GET", "/x/versions?api-version=2024-04-01", nil)
	lo, hi, next, err := pageKeys("https://shoal.example", r, keys, 2, map[string][]string{"$orderBy": {"CreatedAtDesc"}, "listViewType": nil})
	if err != nil || lo != 0 || hi != 2 || !strings.HasPrefix(next, "https://shoal.example/x/versions?") || !strings.Contains(next, "%24orderBy=CreatedAtDesc") || strings.Contains(next, "listViewType") {
		t.Fatalf("%d %d %q %v", lo, hi, next, err)
	}
	tok := base64.RawURLEncoding.EncodeToString([]byte("2"))
	r = httptest.NewRequest("GET", "/x/versions?api-version=2024-04-01&$skip="+tok, nil)
	if lo, hi, next, err := pageKeys("", r, keys, 2, nil); err != nil || lo != 4 || hi != 5 || next != "" {
		t.Errorf("last page: %d %d %q %v", lo, hi, next, err)
	}
	r = httptest.NewRequest("GET", "/x/versions?api-version=2024-04-01&$skip="+base64.RawURLEncoding.EncodeToString([]byte("9")), nil)
	if _, _, _, err := pageKeys("", r, keys, 2, nil); core.ErrorField(err) != "$skip" {
		t.Errorf("a token naming nothing: %v", err)
	}
}

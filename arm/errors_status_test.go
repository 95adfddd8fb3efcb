package arm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// shoalCodes reads every E* error code the root package declares, so that
// a code added there is checked here without editing this test.
func shoalCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../domain/core/error.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !strings.HasPrefix(n.Name, "E") || i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					c, _ := strconv.Unquote(lit.Value)
					codes = append(codes, c)
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d error codes in error.go: %v", len(codes), codes)
	}
	return codes
}

// TestARMStatusIsTheNativeStatus: every Shoal error code is answered
// through ARM at the status the native API answers it (client.StatusFor),
// save the documented ARM overrides. ARM once kept its own table, which
// dropped not_implemented and unavailable: it answered them as a 500 with
// the message hidden, where the native API says 501 and 502.
func TestARMStatusIsTheNativeStatus(t *testing.T) {
	for _, code := range shoalCodes(t) {
		want := client.StatusFor(code)
		if s, ok := armStatusOverrides[code]; ok {
			want = s
		}
		w := httptest.NewRecorder()
		WriteError(w, core.Errorf(code, "x"))
		if w.Code != want {
			t.Errorf("code %s: ARM answers %d, the native API %d", code, w.Code, want)
		}
	}
}

// TestEveryCodeHasAnAzureName: each code has an Azure name of its own,
// and an override is kept only where it differs from the shared table.
func TestEveryCodeHasAnAzureName(t *testing.T) {
	for _, code := range shoalCodes(t) {
		if azureNames[code] == "" {
			t.Errorf("code %s has no Azure name in azureNames", code)
		}
	}
	for code, s := range armStatusOverrides {
		if s == client.StatusFor(code) {
			t.Errorf("override for %s repeats the shared status %d", code, s)
		}
	}
}

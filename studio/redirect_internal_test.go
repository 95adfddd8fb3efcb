package studio

import "testing"

// A sign-in's next parameter stays on this site: a path with exactly one
// leading slash, no backslash, control character or scheme; anything
// else goes to /.
func TestSafeNextStaysOnTheSite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/computes", "/computes"},
		{"/jobs/j1?rank=0#logs", "/jobs/j1?rank=0#logs"},
		{"/computes/a%20b", "/computes/a%20b"},
		{"/", "/"},
		{"", "/"},
		{"computes", "/"},
		{"//evil.com", "/"},
		{"///evil.com", "/"},
		{"/\\evil.com", "/"},
		{"\\/evil.com", "/"},
		{"/a\\..\\..\\evil.com", "/"},
		{"https://evil.com", "/"},
		{"http:/evil.com", "/"},
		{"javascript:alert(1)", "/"},
		{"/javascript:alert(1)", "/javascript:alert(1)"}, // a path on this site
		{"/\t/evil.com", "/"},
		{"/\n/evil.com", "/"},
		{"/\x00/evil.com", "/"},
		{"/\x7f", "/"},
		{"/%09/evil.com", "/"},
		{"/%2F/evil.com", "/"},
		{"/%2f%2fevil.com", "/"},
		{"/%5Cevil.com", "/"},
		{"/%0d%0aSet-Cookie:x=1", "/"},
		{" /evil", "/"},
		{"/ok\u2028", "/"},
	} {
		if got := safeNext(c.in); got != c.want {
			t.Errorf("safeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

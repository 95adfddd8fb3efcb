package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Error messages (which quote what users wrote) are printed with their
// control characters escaped.
func TestErrorsEscapeControls(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"compute", "create", "-f", t.TempDir() + "/x\x1b[2Jy.yml"}, strings.NewReader(""), &out, &errb)
	if code == 0 || strings.ContainsRune(errb.String(), 0x1b) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(errb.String(), `\x1b`) {
		t.Errorf("the name is not shown escaped: %q", errb.String())
	}
}

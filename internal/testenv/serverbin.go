package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// ServerBinVar names a prebuilt full binary (cmd/shoal-server) that the
// tests needing one copy instead of linking their own: scripts/test
// builds it once and sets it, where each package's own `go build` cost
// five seconds of a core to link (three packages, one of them per test).
const ServerBinVar = "SHOAL_SERVER_BIN"

// ServerBinary puts the full binary at dst: a copy of $SHOAL_SERVER_BIN
// when set, else `go build` of cmd/shoal-server (from the module's root,
// or any directory inside it). The copy is dst's own (mode 0755), so a
// test may hand it to hosts or change it without touching the prebuilt
// one.
func ServerBinary(dst string) error {
	if src := os.Getenv(ServerBinVar); src != "" {
		if err := copyExecutable(src, dst); err != nil {
			return fmt.Errorf("%s: %w", ServerBinVar, err)
		}
		return nil
	}
	out, err := exec.Command("go", "build", "-o", dst, "github.com/shoal-ml/shoal/cmd/shoal-server").CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build cmd/shoal-server: %w\n%s", err, out)
	}
	return nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

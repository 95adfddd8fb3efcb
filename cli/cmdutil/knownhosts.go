package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PinHostKey writes an SSH server's host key, as the Shoal server knows
// it from the agent that serves it, to a known_hosts file of its own
// (named name, in the user's cache folder) and returns its path, so that
// ssh checks the key instead of asking (or failing without a terminal,
// "Host key verification failed").
func PinHostKey(name, host string, port int, hostKey string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "shoal", "known_hosts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if port != 22 {
		host = fmt.Sprintf("[%s]:%d", host, port)
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, name)
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(host+" "+strings.TrimSpace(hostKey)+"\n"), 0o600)
}

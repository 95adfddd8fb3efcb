package config

import (
	"fmt"
	"path"
	"strings"
)

// bindMountsAllowed checks a location's app_bind_mounts_allowed: absolute
// paths without "..", other than the root (which would allow every file
// of the host), cleaned.
func bindMountsAllowed(paths []string) ([]string, error) {
	var out []string
	for i, p := range paths {
		f := fmt.Sprintf("app_bind_mounts_allowed[%d] %q", i, p)
		if !path.IsAbs(p) {
			return nil, fmt.Errorf("%s: must be an absolute path", f)
		}
		for _, e := range strings.Split(p, "/") {
			if e == ".." {
				return nil, fmt.Errorf("%s: must not contain '..'", f)
			}
		}
		c := path.Clean(p)
		if c == "/" {
			return nil, fmt.Errorf("%s: must not be the root, which would let an application mount every file of the host", f)
		}
		out = append(out, c)
	}
	return out, nil
}

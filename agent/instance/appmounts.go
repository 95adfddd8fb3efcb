package instance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/compute"
)

// appMounts resolves an application's bind mounts on this host: a source
// in /home/azureuser is the instance's home here (a missing folder there
// is made, the user's), any other source must lie under a path of
// allowed. Each is resolved through its symbolic links, and one that then
// leads out of its home or allowed path is refused with the reason: the
// server checked the path as written, only the node can see where it
// leads. The resolved path is what the engine mounts.
func (rt *Runtime) appMounts(app *compute.CustomApplication, allowed []string) ([]container.Mount, error) {
	var out []container.Mount
	for j, m := range app.BindMounts {
		field := fmt.Sprintf("bind_mounts[%d].source", j)
		src, root, err := rt.mountSource(m.Source, allowed)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %v", field, m.Source, err)
		}
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %v", field, m.Source, err)
		}
		real, err := filepath.EvalSymlinks(src)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %v", field, m.Source, err)
		}
		if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s %q leads to %s through a symbolic link, outside %s: refused", field, m.Source, real, root)
		}
		out = append(out, container.Mount{Source: real, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

// mountSource is where source is on this host and the folder it must
// stay in.
func (rt *Runtime) mountSource(source string, allowed []string) (src, root string, err error) {
	source = filepath.Clean(source)
	if rel, ok := strings.CutPrefix(source, compute.InstanceHomePath); ok && (rel == "" || rel[0] == '/') {
		src = filepath.Join(rt.home, rel)
		if err := mkdirsOwned(rt.currentAccount(), rt.home, rel); err != nil {
			return "", "", err
		}
		return src, rt.home, nil
	}
	for _, a := range allowed {
		a = filepath.Clean(a)
		if source == a || strings.HasPrefix(source, a+"/") {
			return source, a, nil
		}
	}
	return "", "", errors.New("is neither in the instance's home nor under a path the location allows")
}

// mkdirsOwned makes the folders of rel below home that are missing, each
// the account's; an existing one is left as it is (a symbolic link among
// them ends the making: the caller resolves and checks it).
func mkdirsOwned(acct *runas.Account, home, rel string) error {
	dir := home
	for _, e := range strings.Split(strings.Trim(rel, "/"), "/") {
		if e == "" {
			continue
		}
		dir = filepath.Join(dir, e)
		fi, err := os.Lstat(dir)
		if err == nil && !fi.IsDir() {
			// A link (or a file): nothing is made beyond it, where it
			// could lead out of the home.
			return nil
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := acct.MkdirOwned(dir); err != nil {
			return err
		}
	}
	return nil
}

// currentAccount is the instance user's account.
func (rt *Runtime) currentAccount() *runas.Account {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.account
}

package rank

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shoal-ml/shoal/storage/objstore"
)

// othersMayRead checks that every file under p (or p itself) is one the
// job's account could read with its own rights: an nfs datastore's
// files belong to the share's owners, never to the account Shoal made
// for the job, so what it may read is what "others" may (directories
// need read and search). A download copy made by the agent, which runs
// as root, must not hand the job more; a file it may not read fails the
// input naming it, as a copy made with the job's rights would.
func othersMayRead(p string) error {
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		need := fs.FileMode(0o004)
		switch {
		case info.IsDir():
			need = 0o005
		case !info.Mode().IsRegular():
			return nil // links and devices are not copied
		}
		if info.Mode().Perm()&need != need {
			rel, _ := filepath.Rel(p, path)
			return &objstore.Error{Kind: objstore.ErrDenied, Msg: fmt.Sprintf("%s: the job's account may not read it (mode %04o): a download copies only what the job itself could read", filepath.ToSlash(rel), info.Mode().Perm())}
		}
		return nil
	})
}

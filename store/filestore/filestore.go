// Package filestore keeps the server's files: content-addressed artifacts
// (code and input archives uploaded by the CLI), job logs and output
// archives. Every path is built from validated names and confined to the
// store's root with os.Root, so no name can reach outside it.
package filestore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Store is a directory of artifacts, logs and outputs.
type Store struct {
	root  *os.Root
	dir   string
	usage usageCounters
}

// Open opens (creating) the store at dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Store{root: r, dir: dir}, nil
}

// Close releases the store.
func (s *Store) Close() error { return s.root.Close() }

// safeName reports whether name is 1–255 letters, digits, '_', '.' and
// '-', the first a letter or digit. A loop, not the regular expression
// `^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`: its bounded repetition compiled
// to a 240 KB program at every start of every binary linking the store,
// kept for the process's life.
func safeName(name string) bool {
	if len(name) == 0 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// checkName refuses any name that is not one plain path component.
func checkName(kind, name string) error {
	if !safeName(name) || strings.Contains(name, "..") {
		return core.Errorf(core.EINVALID, "%s %q is not a valid name", kind, name)
	}
	return nil
}

// artifactPath is where a workspace's artifact lives: each workspace has
// its own, so that a hash known in one cannot be used (or learnt to
// exist, by an upload that dedupes) from another.
func artifactPath(workspace, id string) (string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return "", err
	}
	if !job.ValidateArtifactRef(id) {
		return "", core.Errorf(core.EINVALID, "artifact id %q must look like sha256:<64 hex digits>", id)
	}
	return path.Join("artifacts", strings.ToLower(workspace), strings.TrimPrefix(id, "sha256:")+".tar.gz"), nil
}

// legacyArtifactPath is where artifacts lived before they were kept per
// workspace; read only for jobs accepted before the change.
func legacyArtifactPath(id string) string {
	return path.Join("artifacts", strings.TrimPrefix(id, "sha256:")+".tar.gz")
}

// uploadTmp holds uploads in flight; the dot keeps it apart from every
// workspace's folder (a workspace name starts with a letter or digit).
const uploadTmp = "artifacts/.tmp"

// PutArtifact stores r (at most max bytes) in a workspace and returns its
// ID, "sha256:<hex>" of the content. Storing the same content twice in
// one workspace is a no-op.
func (s *Store) PutArtifact(workspace string, r io.Reader, max int64) (string, error) {
	id, err := s.putArtifact(workspace, r, max)
	return id, noSpace(err)
}

func (s *Store) putArtifact(workspace string, r io.Reader, max int64) (string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return "", err
	}
	if err := s.root.MkdirAll(uploadTmp, 0o700); err != nil {
		return "", err
	}
	tmpName := fmt.Sprintf(uploadTmp+"/upload-%d", randSuffix())
	f, err := s.root.OpenFile(tmpName, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer s.root.Remove(tmpName)
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if n > max {
		return "", core.Errorf(core.EINVALID, "the upload is larger than %d bytes", max)
	}
	id := "sha256:" + hex.EncodeToString(h.Sum(nil))
	p, _ := artifactPath(workspace, id)
	if err := s.root.MkdirAll(path.Dir(p), 0o700); err != nil {
		return "", err
	}
	err = s.account(workspace, func() (int64, error) {
		if _, err := s.root.Stat(p); err == nil {
			return 0, nil // held already: the same bytes
		}
		if err := s.root.Rename(tmpName, p); err != nil {
			return 0, err
		}
		return n, nil
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// OpenArtifact opens a workspace's artifact. Returns ENOTFOUND, also for
// an artifact that only another workspace holds.
func (s *Store) OpenArtifact(workspace, id string) (io.ReadCloser, error) {
	p, err := artifactPath(workspace, id)
	if err != nil {
		return nil, err
	}
	f, err := s.open(p, "artifact "+id)
	if core.ErrorCode(err) == core.ENOTFOUND {
		// Jobs accepted before artifacts were kept per workspace name
		// an artifact in the old, shared folder; HasArtifact never looks
		// there, so no new job can reach it.
		if lf, lerr := s.open(legacyArtifactPath(id), "artifact "+id); lerr == nil {
			return lf, nil
		}
	}
	return f, err
}

// HasArtifact reports whether a workspace holds an artifact.
func (s *Store) HasArtifact(workspace, id string) bool {
	p, err := artifactPath(workspace, id)
	if err != nil {
		return false
	}
	_, err = s.root.Stat(p)
	return err == nil
}

func (s *Store) open(p, what string) (io.ReadSeekCloser, error) {
	f, err := s.root.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, core.Errorf(core.ENOTFOUND, "%s not found", what)
	} else if err != nil {
		return nil, err
	}
	return f, nil
}

// attemptDir is the folder of one attempt's files.
func attemptDir(kind, workspace, job string, attempt int) (string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return "", err
	}
	if err := checkName("job", job); err != nil {
		return "", err
	}
	return path.Join(kind, strings.ToLower(workspace), job, strconv.Itoa(attempt)), nil
}

// WriteLog writes data at offset of the log of one rank of an attempt.
// Writing at an offset makes retried uploads idempotent.
func (s *Store) WriteLog(workspace, job string, attempt, rank int, offset int64, data []byte) error {
	return noSpace(s.writeLog(workspace, job, attempt, rank, offset, data))
}

func (s *Store) writeLog(workspace, job string, attempt, rank int, offset int64, data []byte) error {
	dir, err := attemptDir("logs", workspace, job, attempt)
	if err != nil {
		return err
	}
	p := path.Join(dir, fmt.Sprintf("rank-%d.log", rank))
	err = s.writeAt(workspace, p, offset, data)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The rank's first chunk: its folders are made then, not walked
	// again for each of the chunks a running rank ships every 100 ms.
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return s.writeAt(workspace, p, offset, data)
}

// writeAt writes data at offset of the file p of a workspace, counting
// what it adds to the file's size.
func (s *Store) writeAt(workspace, p string, offset int64, data []byte) error {
	return s.account(workspace, func() (int64, error) {
		f, err := s.root.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return 0, err
		}
		before, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, err
		}
		_, err = f.WriteAt(data, offset)
		var grew int64
		if after, serr := f.Stat(); serr == nil {
			grew = after.Size() - before.Size()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return grew, err
	})
}

// OpenLog opens the log of one rank of an attempt. Returns ENOTFOUND.
func (s *Store) OpenLog(workspace, job string, attempt, rank int) (io.ReadSeekCloser, error) {
	dir, err := attemptDir("logs", workspace, job, attempt)
	if err != nil {
		return nil, err
	}
	return s.open(path.Join(dir, fmt.Sprintf("rank-%d.log", rank)), "log")
}

// PutOutputs stores the output archive of one rank of an attempt.
func (s *Store) PutOutputs(workspace, job string, attempt, rank int, r io.Reader, max int64) error {
	return noSpace(s.putOutputs(workspace, job, attempt, rank, r, max))
}

func (s *Store) putOutputs(workspace, job string, attempt, rank int, r io.Reader, max int64) error {
	dir, err := attemptDir("outputs", workspace, job, attempt)
	if err != nil {
		return err
	}
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	final := path.Join(dir, fmt.Sprintf("rank-%d.tar.gz", rank))
	tmp := final + ".tmp"
	f, err := s.root.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > max {
		err = core.Errorf(core.EINVALID, "the outputs are larger than %d bytes", max)
	}
	if err != nil {
		s.root.Remove(tmp)
		return err
	}
	return s.account(workspace, func() (int64, error) {
		var old int64
		if fi, err := s.root.Stat(final); err == nil {
			old = fi.Size()
		}
		if err := s.root.Rename(tmp, final); err != nil {
			return 0, err
		}
		return n - old, nil
	})
}

// OpenOutputs opens the output archive of one rank of an attempt. Returns ENOTFOUND.
func (s *Store) OpenOutputs(workspace, job string, attempt, rank int) (io.ReadCloser, error) {
	dir, err := attemptDir("outputs", workspace, job, attempt)
	if err != nil {
		return nil, err
	}
	return s.open(path.Join(dir, fmt.Sprintf("rank-%d.tar.gz", rank)), "outputs")
}

// HasOutputs reports whether an attempt's rank uploaded outputs.
func (s *Store) HasOutputs(workspace, job string, attempt, rank int) bool {
	f, err := s.OpenOutputs(workspace, job, attempt, rank)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

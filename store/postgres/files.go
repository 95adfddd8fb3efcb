package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/filestore"
)

// chunkSize bounds a row of file_chunks: files stream through in chunks
// this size, never whole in memory.
const chunkSize = 1 << 20

// fileTimeout bounds one chunk's read or write.
const fileTimeout = time.Minute

// Files keeps artifacts, logs and outputs in the database (shoal.Files),
// so that every server sharing it serves every file.
type Files struct{ db *sql.DB }

// Files returns the store's file store.
func (db *DB) Files() *Files { return &Files{db: db.db} }

func fileCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), fileTimeout)
}

// putStream writes r (at most max bytes) under a temporary key in chunks
// and returns that key, the size and the SHA-256 of the content.
func (f *Files) putStream(r io.Reader, max int64, what string) (string, int64, []byte, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := fmt.Sprintf("tmp/%s-%x", what, rnd)
	h := sha256.New()
	buf := make([]byte, chunkSize)
	var off int64
	for {
		n, err := io.ReadFull(io.LimitReader(r, max+1-off), buf)
		if n > 0 || off == 0 {
			if off+int64(n) > max {
				f.drop(tmp)
				return "", 0, nil, core.Errorf(core.EINVALID, "the %s is larger than %d bytes", what, max)
			}
			h.Write(buf[:n])
			c, cancel := fileCtx()
			_, werr := f.db.ExecContext(c, `INSERT INTO file_chunks (key, off, data) VALUES ($1, $2, $3)`, tmp, off, buf[:n])
			cancel()
			if werr != nil {
				f.drop(tmp)
				return "", 0, nil, fmt.Errorf("postgres files: %w", werr)
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return tmp, off, h.Sum(nil), nil
		}
		if err != nil {
			f.drop(tmp)
			return "", 0, nil, err
		}
	}
}

// drop removes a key's chunks.
func (f *Files) drop(key string) {
	c, cancel := fileCtx()
	defer cancel()
	f.db.ExecContext(c, `DELETE FROM file_chunks WHERE key = $1`, key)
}

// rename moves tmp's chunks to key, replacing what key held, atomically.
// keep leaves key as it is when it exists (content-addressed artifacts).
func (f *Files) rename(tmp, key string, keep bool) error {
	c, cancel := fileCtx()
	defer cancel()
	tx, err := f.db.BeginTx(c, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(c, `SELECT pg_advisory_xact_lock(hashtext($1))`, key); err != nil {
		return err
	}
	var exists bool
	if err := tx.QueryRowContext(c, `SELECT EXISTS (SELECT 1 FROM file_chunks WHERE key = $1)`, key).Scan(&exists); err != nil {
		return err
	}
	switch {
	case exists && keep:
		if _, err := tx.ExecContext(c, `DELETE FROM file_chunks WHERE key = $1`, tmp); err != nil {
			return err
		}
	default:
		if _, err := tx.ExecContext(c, `DELETE FROM file_chunks WHERE key = $1`, key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(c, `UPDATE file_chunks SET key = $1 WHERE key = $2`, key, tmp); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// has reports whether key has chunks.
func (f *Files) has(key string) bool {
	c, cancel := fileCtx()
	defer cancel()
	var ok bool
	err := f.db.QueryRowContext(c, `SELECT EXISTS (SELECT 1 FROM file_chunks WHERE key = $1)`, key).Scan(&ok)
	return err == nil && ok
}

// open returns a reader of key's chunks, ENOTFOUND when it has none.
func (f *Files) open(key, what string) (io.ReadSeekCloser, error) {
	if !f.has(key) {
		return nil, core.Errorf(core.ENOTFOUND, "%s not found", what)
	}
	return &chunkReader{db: f.db, key: key}, nil
}

// writeAt writes data at offset of key, as a file's WriteAt does: a
// retried write of the same offset replaces its row.
func (f *Files) writeAt(key string, offset int64, data []byte) error {
	for len(data) > 0 || offset == 0 {
		n := min(len(data), chunkSize)
		c, cancel := fileCtx()
		_, err := f.db.ExecContext(c, `INSERT INTO file_chunks (key, off, data) VALUES ($1, $2, $3)
			ON CONFLICT (key, off) DO UPDATE SET data = CASE WHEN length(excluded.data) >= length(file_chunks.data) THEN excluded.data ELSE file_chunks.data END`,
			key, offset, data[:n])
		cancel()
		if err != nil {
			return fmt.Errorf("postgres files: %w", err)
		}
		offset += int64(n)
		data = data[n:]
		if n == 0 {
			break
		}
	}
	return nil
}

// PutArtifact stores r in a workspace and returns its content's ID.
func (f *Files) PutArtifact(workspace string, r io.Reader, max int64) (string, error) {
	if _, err := filestore.ArtifactKey(workspace, "sha256:"+strings.Repeat("0", 64)); err != nil {
		return "", err
	}
	tmp, _, sum, err := f.putStream(r, max, "upload")
	if err != nil {
		return "", err
	}
	id := "sha256:" + hex.EncodeToString(sum)
	key, _ := filestore.ArtifactKey(workspace, id)
	if err := f.rename(tmp, key, true); err != nil {
		f.drop(tmp)
		return "", fmt.Errorf("postgres files: %w", err)
	}
	return id, nil
}

// OpenArtifact opens a workspace's artifact (or, for jobs accepted before
// artifacts were kept per workspace, the shared one). Returns ENOTFOUND.
func (f *Files) OpenArtifact(workspace, id string) (io.ReadCloser, error) {
	key, err := filestore.ArtifactKey(workspace, id)
	if err != nil {
		return nil, err
	}
	r, err := f.open(key, "artifact "+id)
	if core.ErrorCode(err) == core.ENOTFOUND {
		if lr, lerr := f.open(filestore.LegacyArtifactKey(id), "artifact "+id); lerr == nil {
			return lr, nil
		}
	}
	return r, err
}

// HasArtifact reports whether a workspace holds an artifact.
func (f *Files) HasArtifact(workspace, id string) bool {
	key, err := filestore.ArtifactKey(workspace, id)
	return err == nil && f.has(key)
}

// Usage returns the bytes a workspace's artifacts, outputs and logs
// take: one row, kept by the database as chunks change (migration 0018),
// so it is cheap enough to ask before every log write.
func (f *Files) Usage(workspace string) (int64, error) {
	if _, err := filestore.UsageDirs(workspace); err != nil {
		return 0, err
	}
	c, cancel := fileCtx()
	defer cancel()
	var n int64
	err := f.db.QueryRowContext(c, `SELECT bytes FROM file_usage WHERE workspace = $1`, strings.ToLower(workspace)).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("postgres files: %w", err)
	}
	return n, nil
}

// WriteLog writes data at offset of a rank's log.
func (f *Files) WriteLog(workspace, job string, attempt, rank int, offset int64, data []byte) error {
	key, err := filestore.LogKey(workspace, job, attempt, rank)
	if err != nil {
		return err
	}
	return f.writeAt(key, offset, data)
}

// OpenLog opens a rank's log. Returns ENOTFOUND.
func (f *Files) OpenLog(workspace, job string, attempt, rank int) (io.ReadSeekCloser, error) {
	key, err := filestore.LogKey(workspace, job, attempt, rank)
	if err != nil {
		return nil, err
	}
	return f.open(key, "log")
}

// PutOutputs stores a rank's output archive, replacing an earlier one.
func (f *Files) PutOutputs(workspace, job string, attempt, rank int, r io.Reader, max int64) error {
	key, err := filestore.OutputsKey(workspace, job, attempt, rank)
	if err != nil {
		return err
	}
	tmp, _, _, err := f.putStream(r, max, "outputs")
	if err != nil {
		return err
	}
	if err := f.rename(tmp, key, false); err != nil {
		f.drop(tmp)
		return fmt.Errorf("postgres files: %w", err)
	}
	return nil
}

// OpenOutputs opens a rank's output archive. Returns ENOTFOUND.
func (f *Files) OpenOutputs(workspace, job string, attempt, rank int) (io.ReadCloser, error) {
	key, err := filestore.OutputsKey(workspace, job, attempt, rank)
	if err != nil {
		return nil, err
	}
	return f.open(key, "outputs")
}

// HasOutputs reports whether a rank uploaded outputs.
func (f *Files) HasOutputs(workspace, job string, attempt, rank int) bool {
	key, err := filestore.OutputsKey(workspace, job, attempt, rank)
	return err == nil && f.has(key)
}

// WriteInstanceLog writes data at offset of an instance's setup log.
func (f *Files) WriteInstanceLog(workspace, instance string, offset int64, data []byte) error {
	key, err := filestore.InstanceLogKey(workspace, instance)
	if err != nil {
		return err
	}
	return f.writeAt(key, offset, data)
}

// OpenInstanceLog opens an instance's setup log. Returns ENOTFOUND.
func (f *Files) OpenInstanceLog(workspace, instance string) (io.ReadSeekCloser, error) {
	key, err := filestore.InstanceLogKey(workspace, instance)
	if err != nil {
		return nil, err
	}
	return f.open(key, "setup log of compute instance "+instance)
}

// WriteInstanceAppLog writes data at offset of the log of an instance's
// custom application.
func (f *Files) WriteInstanceAppLog(workspace, instance, app string, offset int64, data []byte) error {
	key, err := filestore.InstanceAppLogKey(workspace, instance, app)
	if err != nil {
		return err
	}
	return f.writeAt(key, offset, data)
}

// OpenInstanceAppLog opens the log of an instance's custom application.
// Returns ENOTFOUND.
func (f *Files) OpenInstanceAppLog(workspace, instance, app string) (io.ReadSeekCloser, error) {
	key, err := filestore.InstanceAppLogKey(workspace, instance, app)
	if err != nil {
		return nil, err
	}
	return f.open(key, "log of application "+app+" of compute instance "+instance)
}

// RemoveInstanceFiles removes a deleted instance's files.
func (f *Files) RemoveInstanceFiles(workspace, instance string) error {
	dir, err := filestore.InstanceDir(workspace, instance)
	if err != nil {
		return err
	}
	c, cancel := fileCtx()
	defer cancel()
	// Keys are paths: the instance's are those under its directory.
	_, err = f.db.ExecContext(c, `DELETE FROM file_chunks WHERE key >= $1 AND key < $2`, dir+"/", dir+"0")
	return err
}

// chunkReader reads a file's chunks in offset order, one row at a time.
// Overlapping rows (a log upload retried with more bytes) are read once;
// a gap reads as zeros, as a sparse file does.
type chunkReader struct {
	db  *sql.DB
	key string
	pos int64
	buf []byte // the rest of the current chunk, from pos
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.pos += int64(n)
	return n, nil
}

// fill loads the bytes at pos: from the chunk covering it, else zeros up
// to the next chunk, else EOF.
func (r *chunkReader) fill() error {
	c, cancel := fileCtx()
	defer cancel()
	var off int64
	var data []byte
	err := r.db.QueryRowContext(c, `SELECT off, data FROM file_chunks
		WHERE key = $1 AND off + length(data) > $2 ORDER BY off LIMIT 1`, r.key, r.pos).Scan(&off, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return io.EOF
	} else if err != nil {
		return fmt.Errorf("postgres files: %w", err)
	}
	if off > r.pos {
		r.buf = make([]byte, min(off-r.pos, chunkSize))
		return nil
	}
	r.buf = data[r.pos-off:]
	return nil
}

// Seek moves the read position (io.SeekEnd: from the file's size).
func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		c, cancel := fileCtx()
		defer cancel()
		var size int64
		if err := r.db.QueryRowContext(c, `SELECT COALESCE(MAX(off + length(data)), 0) FROM file_chunks WHERE key = $1`, r.key).Scan(&size); err != nil {
			return 0, fmt.Errorf("postgres files: %w", err)
		}
		offset += size
	default:
		return 0, errors.New("postgres files: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("postgres files: negative position")
	}
	r.pos, r.buf = offset, nil
	return offset, nil
}

// Close releases nothing: every read is its own query.
func (r *chunkReader) Close() error { return nil }

// Import stores r under key (a path as the disk store names its files),
// replacing what key held: moving a SQLite installation's files in.
func (f *Files) Import(key string, r io.Reader) error {
	tmp, _, _, err := f.putStream(r, 1<<62, "import")
	if err != nil {
		return err
	}
	if err := f.rename(tmp, key, false); err != nil {
		f.drop(tmp)
		return fmt.Errorf("postgres files: %w", err)
	}
	return nil
}

// Keys lists the stored files' keys, in order: moving them out.
func (f *Files) Keys(ctx context.Context) ([]string, error) {
	rows, err := f.db.QueryContext(ctx, `SELECT DISTINCT key FROM file_chunks WHERE key NOT LIKE 'tmp/%' ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("postgres files: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// Open opens the file under key. Returns ENOTFOUND.
func (f *Files) Open(key string) (io.ReadSeekCloser, error) { return f.open(key, key) }

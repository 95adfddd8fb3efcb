package store

import "io"

// Files keeps artifacts (content-addressed uploads: code, inputs), the
// logs and output archives of jobs' ranks, and instances' setup logs and
// their applications' logs.
// filestore.Store keeps them on the server's disk (the embedded
// default); the PostgreSQL store keeps them in the database, so that any
// replica serves any download. Open* return ENOTFOUND for what is not
// there; names are checked (one path component each) before use.
type Files interface {
	// PutArtifact stores r (at most max bytes) in a workspace and
	// returns its ID, "sha256:<hex>" of the content; storing it again in
	// that workspace is a no-op. Each workspace keeps its own: Has and
	// Open never see another workspace's, so a hash is no key across them.
	PutArtifact(workspace string, r io.Reader, max int64) (string, error)
	OpenArtifact(workspace, id string) (io.ReadCloser, error)
	HasArtifact(workspace, id string) bool
	// WriteLog writes data at offset of a rank's log: a retried upload
	// writes the same bytes again.
	WriteLog(workspace, job string, attempt, rank int, offset int64, data []byte) error
	OpenLog(workspace, job string, attempt, rank int) (io.ReadSeekCloser, error)
	// PutOutputs stores a rank's output archive (at most max bytes),
	// replacing an earlier upload whole.
	PutOutputs(workspace, job string, attempt, rank int, r io.Reader, max int64) error
	OpenOutputs(workspace, job string, attempt, rank int) (io.ReadCloser, error)
	HasOutputs(workspace, job string, attempt, rank int) bool
	// Usage is the bytes of a workspace's artifacts, outputs, rank logs
	// and instances' setup logs, which count against its storage quota.
	// It is asked before every log write and upload step, so it must be
	// cheap (a kept count, not a walk or a sum).
	Usage(workspace string) (int64, error)
	WriteInstanceLog(workspace, instance string, offset int64, data []byte) error
	OpenInstanceLog(workspace, instance string) (io.ReadSeekCloser, error)
	// WriteInstanceAppLog and OpenInstanceAppLog keep the output of an
	// instance's custom application (app, a name the spec's rules
	// allow), as its setup log is kept; RemoveInstanceFiles removes them.
	WriteInstanceAppLog(workspace, instance, app string, offset int64, data []byte) error
	OpenInstanceAppLog(workspace, instance, app string) (io.ReadSeekCloser, error)
	RemoveInstanceFiles(workspace, instance string) error
}

// LogFile is one stored log (a rank's, an instance's setup log) as the
// capped log writer sees it: where it counts towards a storage quota,
// how to write at an offset and how to read it back.
type LogFile struct {
	Workspace string
	Write     func(offset int64, data []byte) error
	Open      func() (io.ReadSeekCloser, error)
}

package parallel

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// PostFiles keeps a tar (gzip'd or not) of files rank wrote in the job's
// output folders, each path <output name>/<file> under one of the job's
// outputs. A tar with any other entry (an absolute path, "..", a link, a
// device) is refused whole, naming the entry, and nothing is kept.
func (s *Service) PostFiles(ctx context.Context, c *Caller, rank int, body io.Reader) error {
	if err := c.checkRank(rank); err != nil {
		return err
	}
	if err := s.store.View(ctx, func(tx store.Tx) error { _, err := checkPlanned(tx, c); return err }); err != nil {
		return err
	}
	// The tar is checked as it streams into the artifact store: a bad
	// entry breaks the stream, so the artifact is never committed.
	pr, pw := io.Pipe()
	sink := &pipeSink{w: pw}
	checked := make(chan error, 1)
	go func() {
		err := checkTar(io.TeeReader(body, sink), c.Outputs, s.unpacked, s.entries)
		if err == nil {
			_, err = io.Copy(sink, body) // the tar's trailing padding
		}
		checked <- err
		pw.CloseWithError(err)
	}()
	id, perr := s.files.PutArtifact(c.Workspace, pr, s.maxFiles)
	_ = pr.CloseWithError(errors.New("parallel files: stream closed"))
	cerr := <-checked
	switch {
	case sink.failed && perr != nil:
		// The artifact store stopped first (the post is too large, the
		// disk is full): its words, not the broken stream's.
		return perr
	case cerr != nil:
		return cerr
	case perr != nil:
		return perr
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		return tx.InsertParallelFiles(&pproto.FilePost{Workspace: c.Workspace, Job: c.Job, Rank: rank, AttemptID: c.AttemptID, Artifact: id})
	})
}

// pipeSink is the artifact side of a post's stream; failed says that it
// stopped taking bytes before the tar was read whole.
type pipeSink struct {
	w      *io.PipeWriter
	failed bool
}

func (p *pipeSink) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil {
		p.failed = true
	}
	return n, err
}

// openTar reads a tar, gunzipping it when it starts with gzip's magic.
func openTar(r io.Reader) (*tar.Reader, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, core.FieldErrorf("body", "not a gzip'd tar: %v", err)
		}
		return tar.NewReader(zr), nil
	}
	return tar.NewReader(br), nil
}

// checkTar reads a whole tar and refuses an entry outside outputs, and
// a tar whose files add up to more than max bytes or that holds more
// than maxEntries entries.
func checkTar(r io.Reader, outputs map[string]bool, max int64, maxEntries int) error {
	var total int64
	n := 0
	return walkTar(r, "body", func(h *tar.Header, tr io.Reader) error {
		if err := checkEntry(h, outputs); err != nil {
			return err
		}
		if n++; n > maxEntries {
			return core.FieldErrorf("body", "the post holds more than %d entries: post fewer at once", maxEntries)
		}
		if total += h.Size; total > max {
			return core.FieldErrorf("body", "the posted files unpack to more than %d bytes (at entry %q): post fewer at once", max, prefix(h.Name, 200))
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return core.FieldErrorf("body", "entry %q: %v", h.Name, err)
		}
		return nil
	})
}

// walkTar calls fn with each entry of a tar (gzip'd or not); a broken
// tar is an EINVALID error on field.
func walkTar(r io.Reader, field string, fn func(*tar.Header, io.Reader) error) error {
	tr, err := openTar(r)
	if err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return core.FieldErrorf(field, "not a tar of files: %v", err)
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// maxEntryName bounds an entry's path: Linux's PATH_MAX, past which
// rank 0 could not write the file anyway; the ledger keeps every name
// of a job's posts in memory while it merges them.
const maxEntryName = 4096

// checkEntry allows a file or folder <output name>/<path> whose path
// stays inside that output.
func checkEntry(h *tar.Header, outputs map[string]bool) error {
	if len(h.Name) > maxEntryName {
		return core.FieldErrorf("body", "entry %q… has a path of %d bytes, more than %d", prefix(h.Name, 100), len(h.Name), maxEntryName)
	}
	name := strings.TrimSuffix(h.Name, "/")
	if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir {
		return core.FieldErrorf("body", "entry %q is not a file or a folder: only files the workers wrote are kept", h.Name)
	}
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return core.FieldErrorf("body", "entry %q is not a clean relative path <output name>/<file>", h.Name)
	}
	out, _, _ := strings.Cut(name, "/")
	if !outputs[out] {
		return core.FieldErrorf("body", "entry %q is not under one of the job's outputs", h.Name)
	}
	return nil
}

// WriteFiles writes one tar of every posted file, a later post of a path
// winning, for rank 0 to unpack into its outputs.
func (s *Service) WriteFiles(ctx context.Context, c *Caller, w io.Writer) error {
	var posts []*pproto.FilePost
	if err := s.store.View(ctx, func(tx store.Tx) (err error) {
		posts, err = tx.ListParallelFiles(c.Workspace, c.Job)
		return err
	}); err != nil {
		return err
	}
	// First the newest post of each path, then each post's winners.
	newest := map[string]int{}
	for i, p := range posts {
		if err := s.eachEntry(c, p, func(h *tar.Header, _ io.Reader) error {
			newest[strings.TrimSuffix(h.Name, "/")] = i
			return nil
		}); err != nil {
			return err
		}
	}
	tw := tar.NewWriter(w)
	for i, p := range posts {
		if err := s.eachEntry(c, p, func(h *tar.Header, r io.Reader) error {
			if newest[strings.TrimSuffix(h.Name, "/")] != i {
				return nil
			}
			newest[strings.TrimSuffix(h.Name, "/")] = -1 // a path twice in one post: its first
			hdr := &tar.Header{Name: h.Name, Typeflag: h.Typeflag, Mode: h.Mode & 0o755, Size: h.Size, ModTime: h.ModTime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err := io.Copy(tw, r)
			return err
		}); err != nil {
			return err
		}
	}
	return tw.Close()
}

// eachEntry calls fn with each entry of a post.
func (s *Service) eachEntry(c *Caller, p *pproto.FilePost, fn func(*tar.Header, io.Reader) error) error {
	rc, err := s.files.OpenArtifact(c.Workspace, p.Artifact)
	if err != nil {
		return fmt.Errorf("parallel files of %s posted by rank %d: %w", c.Job, p.Rank, err)
	}
	defer rc.Close()
	if err := walkTar(rc, "files", fn); err != nil {
		return fmt.Errorf("parallel files of %s posted by rank %d: %w", c.Job, p.Rank, err)
	}
	return nil
}

package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
)

// Workers is how many objects Download and Upload move at once: enough
// to fill a link with many small files, few enough not to swamp a
// storage server.
const Workers = 8

// Progress is told the bytes moved so far and the total (-1 while
// unknown); it is called from one goroutine at a time.
type Progress func(done, total int64)

// Download copies the objects under prefix into dstDir, which must exist.
// A prefix that is itself an object's key is a file, written as
// dstDir/<its last segment>; otherwise prefix is a folder and each
// object under it lands at its path below the folder. Keys that would
// leave dstDir (`..`, absolute, backslashes) are refused, and the writes
// go through os.Root, so no link in dstDir leads them out either. It
// streams: no object is held whole in memory.
func Download(ctx context.Context, src Source, prefix, dstDir string, progress Progress) error {
	objs, err := src.List(ctx, prefix)
	if err != nil {
		return err
	}
	type item struct {
		obj Object
		rel string
	}
	var items []item
	var total int64
	for _, o := range objs {
		if o.Key == prefix && prefix != "" && !strings.HasSuffix(prefix, "/") {
			// The prefix names one object: a file.
			items = []item{{o, path.Base(o.Key)}}
			total = o.Size
			break
		}
	}
	if items == nil {
		folder := prefix
		if folder != "" && !strings.HasSuffix(folder, "/") {
			folder += "/"
		}
		for _, o := range objs {
			if !strings.HasPrefix(o.Key, folder) {
				continue // "data" lists "database/x" too
			}
			rel := strings.TrimPrefix(o.Key, folder)
			if rel == "" || strings.HasSuffix(rel, "/") {
				continue // a folder marker
			}
			items = append(items, item{o, rel})
			total += o.Size
		}
		if len(items) == 0 && len(objs) == 1 && folder == "" {
			items = []item{{objs[0], path.Base(objs[0].Key)}}
			total = objs[0].Size
		}
	}
	if len(items) == 0 {
		return errorf(ErrNotFound, nil, fmt.Sprintf("no objects under %q", prefix))
	}
	for _, it := range items {
		if err := checkKey(it.rel, false); err != nil {
			return err
		}
	}
	root, err := os.OpenRoot(dstDir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, it := range items {
		if d := path.Dir(it.rel); d != "." {
			// Open to read: a node's data cache entry (inside a folder
			// closed to others) is read by the job's account through
			// a bind mount; a download's copy is handed to it after.
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
		}
	}
	meter := newMeter(total, progress)
	return parallel(ctx, len(items), func(ctx context.Context, i int) error {
		it := items[i]
		r, _, err := src.Open(ctx, it.obj.Key)
		if err != nil {
			return err
		}
		defer r.Close()
		f, err := root.OpenFile(it.rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("write %s: %w", it.rel, err)
		}
		n, err := io.Copy(f, meter.reader(r))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return readFail("get "+it.obj.Key, err)
		}
		if it.obj.Size >= 0 && n != it.obj.Size {
			// The object changed between the listing and the read, or
			// the stream was cut: a cache entry must hold what its key
			// (the listing) says.
			return errorf(nil, nil, fmt.Sprintf("get %s: read %d bytes, the listing said %d (changed while being read?)", it.obj.Key, n, it.obj.Size))
		}
		return nil
	})
}

// Upload copies every regular file under srcDir to dst, each at
// prefix + its slash path below srcDir (a prefix of a folder ends in
// "/"). The walk goes through os.Root: a link the job left that leads out
// of srcDir is refused, not followed.
func Upload(ctx context.Context, dst Source, prefix, srcDir string, progress Progress) error {
	root, err := os.OpenRoot(srcDir)
	if err != nil {
		return err
	}
	defer root.Close()
	type item struct {
		rel  string
		size int64
	}
	var items []item
	var total int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := root.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: %v (a link may not leave the output's folder)", p, unwrapPath(err))
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		items = append(items, item{p, info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return err
	}
	meter := newMeter(total, progress)
	return parallel(ctx, len(items), func(ctx context.Context, i int) error {
		it := items[i]
		f, err := root.Open(it.rel)
		if err != nil {
			return err
		}
		defer f.Close()
		return dst.Put(ctx, prefix+it.rel, meter.reader(f), it.size)
	})
}

// parallel runs do for 0..n-1 on at most Workers goroutines and returns
// the first error, cancelling the rest.
func parallel(ctx context.Context, n int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < min(Workers, n); w++ {
		wg.Go(func() {
			for i := range next {
				if err := do(ctx, i); err != nil {
					once.Do(func() { first = err; cancel(err) })
				}
			}
		})
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// readFail classifies an error met while streaming an object's body.
func readFail(op string, err error) error {
	var oe *Error
	if errors.As(err, &oe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err // the local side's: a full disk, say
	}
	return transportError(op, err)
}

// meter adds up bytes moved by many goroutines and tells progress.
type meter struct {
	mu       sync.Mutex
	done     int64
	total    int64
	progress Progress
}

func newMeter(total int64, p Progress) *meter { return &meter{total: total, progress: p} }

// reader counts what r yields.
func (m *meter) reader(r io.Reader) io.Reader {
	if m.progress == nil {
		return r
	}
	return &meterReader{r: r, m: m}
}

type meterReader struct {
	r io.Reader
	m *meter
}

func (mr *meterReader) Read(p []byte) (int, error) {
	n, err := mr.r.Read(p)
	if n > 0 {
		mr.m.mu.Lock()
		mr.m.done += int64(n)
		mr.m.progress(mr.m.done, mr.m.total)
		mr.m.mu.Unlock()
	}
	return n, err
}

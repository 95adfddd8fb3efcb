package rank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// dataError is a failure of the job's data: an input it cannot get or
// an output its datastore refused. The message is the source's own
// words (objstore errors never hold a credential); the rank fails with
// Failure, which spends no retry and loses no node.
type dataError struct {
	failure job.RankFailure
	msg     string
	err     error
}

func (e *dataError) Error() string { return e.msg }
func (e *dataError) Unwrap() error { return e.err }

// nodeError is the node's own failure met on the way to the job's data
// (its network namespace could not be made): the rank is lost and runs
// again, the job not blamed.
type nodeError struct{ err error }

func (e *nodeError) Error() string { return e.err.Error() }
func (e *nodeError) Unwrap() error { return e.err }

// inputFailed wraps err, met fetching input name, as the job's failure
// (a nodeError stays the node's).
func inputFailed(name string, src *node.DataSource, err error) error {
	var ne *nodeError
	if errors.As(err, &ne) {
		return fmt.Errorf("input %s: %w", name, ne)
	}
	return &dataError{failure: node.RankInputFailed, err: err,
		msg: fmt.Sprintf("input %s (%s): %v", name, describeSource(src), err)}
}

// describeSource names a source for messages: its asset, else its URI.
func describeSource(src *node.DataSource) string {
	if src.Asset != "" {
		return "azureml:" + src.Asset
	}
	return src.URI
}

// dataDialer is how a rank's fetches and uploads reach the network: the
// job's own network namespace when its host processes run in one (its
// way out, never the host's loopback), else the host's; always through
// objstore.GuardDialer, which refuses the loopback, the
// link-local addresses (the cloud metadata address), and the server's
// own host:port on whatever address it resolves to. So an input URL
// reaches nothing the job's own process may not.
func (r *Rank) dataDialer() (objstore.Dialer, error) {
	ns, err := r.jobNetwork()
	if err != nil {
		return nil, &nodeError{err}
	}
	deny := deniedEndpoints(r.n.ServerURL)
	if r.n.OwnEndpoints != nil {
		deny = append(deny, r.n.OwnEndpoints()...)
	}
	if ns != nil {
		return objstore.GuardDialer(nsDialer(ns, r.n.Networks.Slirp != ""), deny), nil
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return objstore.GuardDialer(d.DialContext, deny), nil
}

// deniedEndpoints are the host:ports no job's data may come from or go
// to, besides the agent's own (Node.OwnEndpoints): the server's (by its URL's host, and by each address that host
// resolves to now).
func deniedEndpoints(serverURL string) []string {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	deny := []string{net.JoinHostPort(u.Hostname(), port)}
	if addrs, err := net.LookupHost(u.Hostname()); err == nil {
		for _, a := range addrs {
			deny = append(deny, net.JoinHostPort(a, port))
		}
	}
	return deny
}

// openSource is the objstore.Source of src, reached through dial.
func openSource(src *node.DataSource, dial objstore.Dialer) (objstore.Source, error) {
	cred := src.Credentials
	switch src.Kind {
	case node.DataAzureBlob:
		cfg := objstore.AzureBlobConfig{ServiceURL: src.ServiceURL, Container: src.Container, Dial: dial}
		if cred != nil {
			cfg.AccountKey, cfg.SASToken = cred.AccountKey, cred.SASToken
			cfg.TenantID, cfg.ClientID, cfg.ClientSecret = cred.TenantID, cred.ClientID, cred.ClientSecret
			if cred.AccountKey != "" {
				cfg.AccountName = blobAccount(src.ServiceURL)
			}
		}
		if !src.AllowHTTP && strings.HasPrefix(strings.ToLower(src.ServiceURL), "http://") {
			return nil, &objstore.Error{Kind: objstore.ErrUnsupported, Msg: src.ServiceURL + ": plain http is refused: the datastore's protocol is not http"}
		}
		return objstore.NewAzureBlob(cfg)
	case node.DataS3:
		cfg := objstore.S3Config{EndpointURL: src.ServiceURL, Bucket: src.Container, Region: src.Region, Dial: dial}
		if cfg.EndpointURL == "" {
			region := src.Region
			if region == "" {
				region = "us-east-1"
			}
			cfg.EndpointURL = "https://s3." + region + ".amazonaws.com"
		}
		if cred != nil {
			cfg.AccessKeyID, cfg.SecretAccessKey = cred.AccessKeyID, cred.SecretAccessKey
		}
		return objstore.NewS3(cfg)
	case node.DataHTTP:
		return objstore.NewHTTP(src.ServiceURL, src.AllowHTTP, dial)
	case node.DataNFS:
		return objstore.NewLocal(src.Root)
	}
	return nil, &objstore.Error{Kind: objstore.ErrUnsupported, Msg: fmt.Sprintf("a source of kind %q is not supported by this agent", src.Kind)}
}

// blobAccount is the account of a Blob service URL: the first label of
// its host (acct.blob.core.windows.net), or its path's first segment
// when the URL is path-style (Azurite: http://10.1.2.3:10000/acct).
func blobAccount(serviceURL string) string {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return ""
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		first, _, _ := strings.Cut(p, "/")
		return first
	}
	host, _, _ := strings.Cut(u.Hostname(), ".")
	return host
}

// sourceIdentity names where a source's bytes are for the cache's key:
// never a credential, so two datastores on one container share entries
// (the listing, with its versions, is in the key too).
func sourceIdentity(src *node.DataSource) string {
	return strings.Join([]string{src.Kind, src.ServiceURL, src.Container, src.Root, src.Prefix}, "\x00")
}

// sourcePrefix is the prefix of src to list and fetch: its Prefix (a
// URL's source lists its one file under "").
func sourcePrefix(src *node.DataSource) string {
	if src.Kind == node.DataHTTP {
		return ""
	}
	return src.Prefix
}

// fetchInput puts input name, from src, at dst in in's mode and returns
// what ${{inputs.name}} becomes: dst (or the one file in it for a
// uri_file), or the URI itself in direct mode. What it holds of the
// node (a cache entry, a mount) the rank gives back in releaseData.
func (r *Rank) fetchInput(ctx context.Context, name string, in *job.JobInput, src *node.DataSource, dst string) (string, error) {
	mode := in.InputMode()
	if mode == jobio.ModeDirect {
		return src.URI, nil
	}
	readOnly := mode == jobio.ModeROMount || mode == jobio.ModeEvalMount
	var dir string
	switch {
	case src.Kind == node.DataShoal && src.Artifact != "":
		if err := r.fetch(ctx, src.Artifact, dst); err != nil {
			return "", err
		}
		return shoalValue(in, src, dst), nil
	case src.Kind == node.DataShoal:
		// Another job's kept output, through the agent API, unpacked as
		// uploaded inputs are.
		err := r.fetchKeptOutput(ctx, name, dst)
		switch core.ErrorCode(err) {
		case "":
		case core.ENOTFOUND, core.EFORBIDDEN, core.EINVALID:
			return "", inputFailed(name, src, err)
		default:
			// The server away, an archive refused for safety: as for
			// uploaded inputs (prepareFailureState).
			return "", fmt.Errorf("input %s: %w", name, err)
		}
		return shoalValue(in, src, dst), nil
	case src.Kind == node.DataNFS:
		p, err := nfsPath(src)
		if err != nil {
			return "", inputFailed(name, src, err)
		}
		if !readOnly {
			// The agent copies as root: it must copy no more than the
			// job's account could read itself (a bind mount keeps the
			// files' own modes, so ro_mount needs no check).
			if err := othersMayRead(p); err != nil {
				return "", inputFailed(name, src, err)
			}
		}
		dir = p
	default:
		entry, err := r.cacheInput(ctx, name, src)
		if err != nil {
			return "", inputFailed(name, src, err)
		}
		r.dataMu.Lock()
		r.entries = append(r.entries, entry)
		r.dataMu.Unlock()
		dir = entry.Dir()
	}
	if readOnly {
		// Mounted once the rank's folders are its account's (mountInputs):
		// handing the folders over must not walk into the cache.
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return "", err
		}
		r.dataMu.Lock()
		r.pending = append(r.pending, [2]string{dir, dst})
		r.dataMu.Unlock()
		return sourceValue(in, dir, dst), nil
	}
	if err := copyTree(dir, dst); err != nil {
		return "", fmt.Errorf("input %s: copying it into the job's folder: %w", name, err)
	}
	return inputValue(in, dst), nil
}

// sourceValue is inputValue of dir as it will be seen at dst.
func sourceValue(in *job.JobInput, dir, dst string) string {
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return filepath.Join(dst, filepath.Base(dir))
	}
	if v := inputValue(in, dir); v != dir {
		return filepath.Join(dst, filepath.Base(v))
	}
	return dst
}

// mountInputs mounts the read-only inputs fetchInput set aside.
func (r *Rank) mountInputs() error {
	r.dataMu.Lock()
	pending := r.pending
	r.pending = nil
	r.dataMu.Unlock()
	for _, p := range pending {
		if err := r.mountReadOnly(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// shoalValue is what ${{inputs.X}} becomes for Shoal's own file store:
// the place Prefix names inside the upload or kept output unpacked at
// dst (a file of a folder upload, a folder of a job's output), else as
// inputValue. The server made Prefix from a parsed URI (no "..").
func shoalValue(in *job.JobInput, src *node.DataSource, dst string) string {
	// A place uploaded through the Blob endpoint (Container set) comes
	// as its own archive: its Prefix is where it is, not a path in it.
	if p := strings.Trim(src.Prefix, "/"); p != "" && src.Container == "" && filepath.IsLocal(filepath.FromSlash(p)) {
		return filepath.Join(dst, filepath.FromSlash(p))
	}
	return inputValue(in, dst)
}

// fetchKeptOutput unpacks the kept output input name reads into dst.
func (r *Rank) fetchKeptOutput(ctx context.Context, name, dst string) error {
	body, err := r.n.Client.Input(ctx, r.t.RankRef, name)
	if err != nil {
		return err
	}
	defer body.Close()
	return archive.Unpack(body, dst, archive.Limits{})
}

// inputValue is what ${{inputs.X}} becomes for a folder at dst: dst,
// or for a uri_file the one file in it.
func inputValue(in *job.JobInput, dst string) string {
	if in.Type == jobio.TypeURIFile {
		if entries, err := os.ReadDir(dst); err == nil && len(entries) == 1 {
			return filepath.Join(dst, entries[0].Name())
		}
	}
	return dst
}

// nfsPath is the folder or file of an nfs source on this node: Prefix
// under Root, which no link may leave.
func nfsPath(src *node.DataSource) (string, error) {
	root, err := filepath.EvalSymlinks(src.Root)
	if err != nil {
		return "", &objstore.Error{Kind: objstore.ErrNotFound, Msg: fmt.Sprintf("%s: the datastore's path is not on this node: %v", src.Root, unwrapPathErr(err))}
	}
	p, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(src.Prefix)))
	if err != nil {
		return "", &objstore.Error{Kind: objstore.ErrNotFound, Msg: fmt.Sprintf("%s: %v", src.URI, unwrapPathErr(err))}
	}
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return "", &objstore.Error{Kind: objstore.ErrDenied, Msg: fmt.Sprintf("%s: a link out of the datastore's path %s", src.URI, src.Root)}
	}
	return p, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// cacheInput gets src into the node's data cache (once per version on
// the host) and holds the entry, reporting Preparing with the bytes
// fetched.
func (r *Rank) cacheInput(ctx context.Context, name string, src *node.DataSource) (*datacache.Entry, error) {
	if r.n.Data == nil {
		return nil, &objstore.Error{Kind: objstore.ErrUnsupported, Msg: "this node has no data cache"}
	}
	dial, err := r.dataDialer()
	if err != nil {
		return nil, err
	}
	s, err := openSource(src, dial)
	if err != nil {
		return nil, err
	}
	prefix := sourcePrefix(src)
	// A registered version (a data asset or model the server resolved)
	// is one entry per workspace and place: once the node holds it, the
	// source is only asked, with this job's credential, whether the job
	// may still read there (one listing entry), not listed whole.
	key, byVersion := datacache.Key{}, false
	if p, ok := s.(objstore.Prober); ok && src.Asset != "" {
		key, byVersion = datacache.KeyOfVersion(sourceIdentity(src), r.t.Workspace, src.Asset), true
		if e, ok := r.n.Data.Lookup(key); ok {
			if err := p.Probe(ctx, prefix); err != nil {
				e.Release()
				return nil, err
			}
			return e, nil
		}
	}
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, &objstore.Error{Kind: objstore.ErrNotFound, Msg: fmt.Sprintf("no objects under %s", src.URI)}
	}
	if !byVersion {
		key = datacache.KeyOf(sourceIdentity(src), objs)
	}
	var size int64
	for _, o := range objs {
		if o.Size > 0 {
			size += o.Size
		}
	}
	progress := r.preparingReporter()
	what := fmt.Sprintf("fetching input %s (%s)", name, describeSource(src))
	progress.Report(what)
	return r.n.Data.Get(ctx, key, size, func(dir string) error {
		return objstore.Download(ctx, s, prefix, dir, func(done, total int64) {
			progress.Report(fmt.Sprintf("%s — %d of %d MB", what, megabytes(done), megabytes(total)))
		})
	})
}

// megabytes is n bytes in MB, rounded, for a Preparing message as
// image pulls say it ("120 of 216 MB").
func megabytes(n int64) int64 { return (n + 500_000) / 1_000_000 }

// preparingReporter sends the rank's Preparing reports, rate-limited as
// an image pull's are; progress only, never waited for.
func (r *Rank) preparingReporter() *ctrhost.ProgressReporter {
	t := r.t
	return &ctrhost.ProgressReporter{Interval: preparingInterval, Now: time.Now, Send: func(reason string) {
		go func() {
			c, done := context.WithTimeout(context.WithoutCancel(context.Background()), 10*time.Second)
			defer done()
			if _, err := r.n.Client.Report(c, t.RankRef, &node.RankReport{State: node.RankPreparing, Reason: reason}); err != nil {
				r.n.Log.Debug("a Preparing report was not taken", "err", err)
			}
		}()
	}}
}

// mountReadOnly shows dir at dst read-only: a bind mount remounted
// read-only, which no process of the job can write through whatever its
// account (root's files of the cache are read-only too). An agent that
// is not root cannot mount: dst is then a link to dir, whose files the
// cache made read-only.
func (r *Rank) mountReadOnly(dir, dst string) error {
	if os.Geteuid() != 0 {
		os.Remove(dst)
		r.dataMu.Lock()
		r.roInputs = append(r.roInputs, [2]string{dir, dir}) // a container sees the link's target at its place
		r.dataMu.Unlock()
		return os.Symlink(dir, dst)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		// A single nfs file: mount it over a file of its name.
		// 0755: the job's account passes through this root-owned
		// folder to the file mounted in it; the inputs folder around
		// it is the account's own (0700), closed to others.
		os.Remove(dst)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		dst = filepath.Join(dst, filepath.Base(dir))
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := unix.Mount(dir, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting the input read-only: %w", err)
	}
	r.dataMu.Lock()
	r.mounts = append(r.mounts, dst)
	r.roInputs = append(r.roInputs, [2]string{dir, dst})
	r.dataMu.Unlock()
	if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("making the input's mount read-only: %w", err)
	}
	return nil
}

// releaseData unmounts the rank's read-only inputs and lets its cache
// entries be evicted again; a second call does nothing.
func (r *Rank) releaseData() {
	r.dataMu.Lock()
	mounts, entries := r.mounts, r.entries
	r.mounts, r.entries = nil, nil
	r.dataMu.Unlock()
	for i := len(mounts) - 1; i >= 0; i-- {
		if err := unix.Unmount(mounts[i], unix.MNT_DETACH); err != nil {
			r.n.Log.Warn("unmounting an input failed", "path", mounts[i], "err", err)
		}
	}
	for _, e := range entries {
		e.Release()
	}
}

// unmountStale unmounts what an earlier run of this attempt left
// mounted under inputs (an agent that died mid-rank), so that starting
// the folder afresh removes the job's copy, never the cache's bytes.
func unmountStale(dir string) {
	des, err := os.ReadDir(filepath.Join(dir, "inputs"))
	if err != nil {
		return
	}
	for _, de := range des {
		p := filepath.Join(dir, "inputs", de.Name())
		for unix.Unmount(p, unix.MNT_DETACH) == nil {
		}
		if sub, err := os.ReadDir(p); err == nil {
			for _, s := range sub {
				unix.Unmount(filepath.Join(p, s.Name()), unix.MNT_DETACH)
			}
		}
	}
}

// copyTree copies the files under src (a folder, or one file) into dst
// for a download-mode input; the rank's preparation then makes them the
// job's account's.
func copyTree(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if !info.IsDir() {
		return copyFile(src, filepath.Join(dst, filepath.Base(src)))
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return nil // a link or a device: nothing a cache entry or a datastore's data needs
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// uploadOutputs uploads each output that has a target (a datastore
// other than Shoal's own file store) from the rank's outputs folder to
// the target's prefix, through the same guarded dialer as inputs. A
// refusal is the job's: the datastore's words name the output.
func (r *Rank) uploadOutputs(ctx context.Context, outDir string) error {
	names := make([]string, 0, len(r.t.OutputTargets))
	for name := range r.t.OutputTargets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		dst := r.t.OutputTargets[name]
		if dst == nil || dst.Kind == node.DataShoal {
			continue // kept by the server with the rank's other outputs
		}
		if err := r.uploadOutput(ctx, name, dst, filepath.Join(outDir, name)); err != nil {
			var ne *nodeError
			if errors.As(err, &ne) {
				return fmt.Errorf("output %s: %w", name, ne)
			}
			return &dataError{failure: node.RankOutputFailed, err: err,
				msg: fmt.Sprintf("output %s (%s): %v", name, dst.URI, err)}
		}
	}
	return nil
}

// uploadOutput uploads dir to dst: its files under dst's prefix, or,
// for a prefix naming a file (no trailing '/'), the one file dir holds.
func (r *Rank) uploadOutput(ctx context.Context, name string, dst *node.DataSource, dir string) error {
	dial, err := r.dataDialer()
	if err != nil {
		return err
	}
	s, err := openSource(dst, dial)
	if err != nil {
		return err
	}
	prefix := dst.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		if des, err := os.ReadDir(dir); err == nil && len(des) == 1 && des[0].Type().IsRegular() {
			// Opened within the folder: the job's account owns it, and
			// a link swapped in must not lead the agent out of it.
			root, err := os.OpenRoot(dir)
			if err != nil {
				return err
			}
			defer root.Close()
			f, err := root.OpenFile(des[0].Name(), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file", des[0].Name())
			}
			return s.Put(ctx, prefix, f, info.Size())
		}
		prefix += "/"
	}
	return objstore.Upload(ctx, s, prefix, dir, nil)
}

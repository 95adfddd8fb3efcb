package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// resultsDir is the folder of a node's work dir that holds the results of
// finished ranks not yet reported to the server.
const resultsDir = "results"

// maxSpares bounds the delivered results' files an outbox keeps to write
// the next results into. A delivered result's file is not deleted: on
// ext4 every inode freed makes the next inode allocations of its block
// group skip it for a minute or more (the recently-deleted check), and a
// node running hundreds of jobs a second spent a third of its CPU in that
// scan when each delivered result was deleted. It is not kept either (a
// node that ran a million jobs kept a million files): it becomes a spare
// (".spare-N" in resultsDir, ignored when loading), which the next put
// truncates, writes and renames into place, so that a steady stream of
// results allocates no inode at all.
//
// A spare stays open once opened, and so does the result written into it
// until it is a spare again: a result then costs a pwrite, an ftruncate
// and a rename, not an open and a close too (with the four fcntl and the
// failed epoll_ctl Go spends on each file it opens), which were most of
// writing a result (bench/jobs --agent-cpuprofile). At most maxOpen files
// are held open so: a server away while results pile up does not have
// the agent hold one per result.
const maxSpares = 8

// maxOpen bounds the files an outbox holds open (spares and pending
// results written into them): the spares and as many results in flight.
const maxOpen = 2 * maxSpares

// spare is a delivered result's file, to write the next result into.
type spare struct {
	path string
	// fd is the file open for writing; -1 until it is first taken (a
	// spare an earlier agent left).
	fd int
}

// Result is the end of a rank that the server has not acknowledged
// yet. It is written to the node's work dir before the agent reports it,
// so that neither a server that is away nor an agent that exits meanwhile
// loses it: this agent, or the next one started on the same work dir,
// reports it when the server answers.
type Result struct {
	Ref     node.RankRef    `json:"ref"`
	JobName string          `json:"job_name"`
	Report  node.RankReport `json:"report"`
	// OutputsDir holds the rank's outputs; OutputsUploaded says they are
	// with the server already.
	OutputsDir      string `json:"outputs_dir"`
	OutputsUploaded bool   `json:"outputs_uploaded"`
	// LogPath is the rank's log; what is past LogOffset is shipped before
	// the report (chunks are written at their offsets, so a resend after a
	// lost answer is harmless).
	LogPath string `json:"log_path"`
	// LogOffset is how much of the log the server has already.
	LogOffset int64 `json:"log_offset"`
	// LogMax is the log's cap (the task's MaxLogBytes).
	LogMax int64 `json:"log_max,omitempty"`
}

// Outbox keeps the pending results of a node, on disk and in memory.
type Outbox struct {
	dir string

	mu      sync.Mutex
	pending map[node.RankRef]*Result
	// busy holds the results being delivered, so the rank that wrote a
	// result and the delivery loop never send it twice at once.
	busy map[node.RankRef]bool
	// wake is signalled when a result is added, so the delivery loop
	// tries at once.
	wake chan struct{}
	// spares are delivered results' files to write the next ones into
	// (maxSpares); nextSpare numbers the next one made.
	spares    []spare
	nextSpare int
	// held are the open files of pending results written into a spare:
	// each becomes a spare again, still open, when its result is done.
	held map[node.RankRef]int
	// open counts the files open in spares and held (maxOpen).
	open int
}

// OpenOutbox loads the results an earlier agent left in workDir. A file
// that cannot be read is renamed aside (`.bad`) and reported, never
// silently dropped.
func OpenOutbox(workDir string) (*Outbox, []error) {
	o := &Outbox{dir: filepath.Join(workDir, resultsDir), pending: map[node.RankRef]*Result{}, busy: map[node.RankRef]bool{}, wake: make(chan struct{}, 1), held: map[node.RankRef]int{}}
	var errs []error
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return o, []error{err}
	}
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return o, []error{err}
	}
	for _, e := range entries {
		if name, ok := strings.CutPrefix(e.Name(), ".spare-"); ok && !e.IsDir() {
			if n, err := strconv.Atoi(name); err == nil && len(o.spares) < maxSpares {
				o.spares = append(o.spares, spare{path: filepath.Join(o.dir, e.Name()), fd: -1})
				// New spares are numbered past every one found, so that
				// none is named as one being written.
				o.nextSpare = max(o.nextSpare, n+1)
			}
			continue
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(o.dir, e.Name())
		b, err := os.ReadFile(path)
		var p Result
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err == nil && p.Ref.AttemptID == "" {
			err = errors.New("no attempt named")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("result %s: %w (kept as %s.bad)", e.Name(), err, e.Name()))
			_ = os.Rename(path, path+".bad")
			continue
		}
		o.pending[p.Ref] = &p
	}
	return o, errs
}

// Path is the file that holds ref's result.
func (o *Outbox) Path(ref node.RankRef) string {
	return filepath.Join(o.dir, fmt.Sprintf("%s-r%d.json", ref.AttemptID, ref.Rank))
}

// Put writes p to disk (atomically: a reader sees the old file or the new
// one), keeps it in memory and wakes the delivery loop. It writes into a
// spare when there is one (see maxSpares), else into a new temporary
// file, and renames it into place.
func (o *Outbox) Put(p *Result) error {
	err := o.Keep(p)
	o.Kick()
	return err
}

// Keep is Put without waking the delivery loop: for a caller that
// delivers the result itself at once and kicks the loop only when that
// fails (the agent's Finish). Waking the loop for a result its writer is
// delivering only had the loop find it claimed, once per job.
func (o *Outbox) Keep(p *Result) error {
	err := o.write(p)
	// Kept in memory whatever befalls the file: the result is then
	// delivered as long as this agent lives (the agent's Finish,
	// agent/ranks.go). Only once the file is in place, so that the
	// delivery loop never finds a result whose file is still being
	// written (its Done would find no file to make a spare of).
	o.mu.Lock()
	o.pending[p.Ref] = p
	o.mu.Unlock()
	return err
}

// write puts p's file in place: into a spare, kept open (held), or else a
// new file.
func (o *Outbox) write(p *Result) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	dst := o.Path(p.Ref)
	if s, ok := o.takeSpare(); ok {
		// Written over the old content, then cut to length: emptied
		// first, the file would free its block and allocate it again.
		err := pwriteAll(s.fd, b)
		if err == nil {
			err = unix.Ftruncate(s.fd, int64(len(b)))
		}
		if err == nil {
			// unix.Rename, not os.Rename, which looks at dst first
			// (an lstat) only to refuse a folder there, as rename(2)
			// does itself.
			err = unix.Rename(s.path, dst)
		}
		if err != nil {
			o.closeFD(s.fd)
			os.Remove(s.path)
			return &os.PathError{Op: "write result", Path: s.path, Err: err}
		}
		o.mu.Lock()
		if old, ok := o.held[p.Ref]; ok {
			// p replaced a file of its own (Deliver's Put after the
			// outputs went): that one is gone, its descriptor with it.
			delete(o.held, p.Ref)
			o.closeLocked(old)
		}
		if o.open > maxOpen {
			o.closeLocked(s.fd)
		} else {
			o.held[p.Ref] = s.fd
		}
		o.mu.Unlock()
		return nil
	}
	tmp, err := os.CreateTemp(o.dir, ".result-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	o.mu.Lock()
	if old, ok := o.held[p.Ref]; ok {
		delete(o.held, p.Ref)
		o.closeLocked(old)
	}
	o.mu.Unlock()
	return nil
}

// closeFD closes a file the outbox held open.
func (o *Outbox) closeFD(fd int) {
	o.mu.Lock()
	o.closeLocked(fd)
	o.mu.Unlock()
}

// closeLocked is closeFD with o.mu held.
func (o *Outbox) closeLocked(fd int) {
	unix.Close(fd)
	o.open--
}

// pwriteAll writes b at the start of the file open as fd.
func pwriteAll(fd int, b []byte) error {
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += n
	}
	return nil
}

// takeSpare takes a spare, open for writing; false when there is none (a
// spare that cannot be opened is forgotten).
func (o *Outbox) takeSpare() (spare, bool) {
	for {
		o.mu.Lock()
		if len(o.spares) == 0 {
			o.mu.Unlock()
			return spare{}, false
		}
		s := o.spares[len(o.spares)-1]
		o.spares = o.spares[:len(o.spares)-1]
		o.mu.Unlock()
		if s.fd >= 0 {
			return s, true
		}
		fd, err := unix.Open(s.path, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err == nil {
			o.mu.Lock()
			o.open++
			o.mu.Unlock()
			s.fd = fd
			return s, true
		}
	}
}

// Kick wakes the delivery loop.
func (o *Outbox) Kick() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Done forgets a result the server acknowledged (or refused for good);
// its file becomes a spare (maxSpares), still open when it was, or goes
// when there are enough.
func (o *Outbox) Done(ref node.RankRef) {
	o.mu.Lock()
	delete(o.pending, ref)
	fd, held := o.held[ref]
	delete(o.held, ref)
	if !held {
		fd = -1
	}
	name := ""
	if len(o.spares) < maxSpares {
		name = filepath.Join(o.dir, ".spare-"+strconv.Itoa(o.nextSpare))
		o.nextSpare++
	}
	o.mu.Unlock()
	path := o.Path(ref)
	if name == "" || unix.Rename(path, name) != nil {
		_ = os.Remove(path)
		if fd >= 0 {
			o.closeFD(fd)
		}
		return
	}
	o.mu.Lock()
	o.spares = append(o.spares, spare{path: name, fd: fd})
	o.mu.Unlock()
}

// Claim marks ref as being delivered; false when it is already, or gone.
func (o *Outbox) Claim(ref node.RankRef) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.busy[ref] || o.pending[ref] == nil {
		return false
	}
	o.busy[ref] = true
	return true
}

// Unclaim ends a delivery claimed with claim.
func (o *Outbox) Unclaim(ref node.RankRef) {
	o.mu.Lock()
	delete(o.busy, ref)
	o.mu.Unlock()
}

// Has reports whether ref's result is waiting.
func (o *Outbox) Has(ref node.RankRef) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending[ref] != nil
}

// List returns the waiting results, oldest attempt first (by name, which
// is stable), as copies safe to change.
func (o *Outbox) List() []*Result {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]*Result, 0, len(o.pending))
	for _, p := range o.pending {
		c := *p
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ref.AttemptID != out[j].Ref.AttemptID {
			return out[i].Ref.AttemptID < out[j].Ref.AttemptID
		}
		return out[i].Ref.Rank < out[j].Ref.Rank
	})
	return out
}

// Refs returns the refs of the waiting results.
func (o *Outbox) Refs() []node.RankRef {
	list := o.List()
	out := make([]node.RankRef, len(list))
	for i, p := range list {
		out[i] = p.Ref
	}
	return out
}

// Len returns how many results wait.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pending)
}

// Dir is the folder that holds the results.
func (o *Outbox) Dir() string { return o.dir }

// Wake is signalled when a result is added, so the delivery loop tries at
// once.
func (o *Outbox) Wake() <-chan struct{} { return o.wake }

// errUnreachable marks a delivery that failed because the server did not
// answer: the result stays and is retried.
var errUnreachable = errors.New("server unreachable")

// Deliver sends one result through c: outputs (once), the log, then the
// final report. It returns errUnreachable (wrapped) when the server did
// not answer; any answer — acceptance or a refusal such as "no longer the
// current attempt" — ends the result's life. The server's answer to an
// accepted report is returned, since a report that freed the node may
// bring its next task; sameOwner packs only files of the outputs' owner
// (see UploadOutputs).
//
// With logInReport (the server said its reports take a log,
// node.AgentSyncResponse.ReportsTakeLog) an end of the log up to
// node.MaxReportLog rides with the report instead of an upload of its
// own: a quick rank's end then costs one request, not two.
func (o *Outbox) Deliver(ctx context.Context, c *client.AgentClient, p *Result, sameOwner, logInReport bool, log *slog.Logger) (*node.AgentSyncResponse, error) {
	if !p.OutputsUploaded && p.OutputsDir != "" && dirHasEntries(p.OutputsDir) {
		_, _ = c.Report(ctx, p.Ref, &node.RankReport{State: node.RankFinalizing})
		err := UploadOutputs(ctx, c, p.Ref, p.OutputsDir, sameOwner)
		switch {
		case err == nil:
		case isAnswer(err):
			log.Warn("outputs refused", "job", p.JobName, "attempt", p.Ref.AttemptID, "err", err)
			// A rank whose outputs were not kept did not do what it was
			// asked: reported Completed, the next step of a pipeline
			// would read an empty folder as if nothing had been written.
			p.Report.Artifacts = false
			if p.Report.State == node.RankCompleted {
				p.Report.State, p.Report.Failure = node.RankFailed, node.RankOutputsRefused
				p.Report.Reason = "its outputs were not kept: " + core.ErrorMessage(err)
			}
		default:
			return nil, fmt.Errorf("%w: %v", errUnreachable, err)
		}
		p.OutputsUploaded = true
		if err := o.Put(p); err != nil {
			log.Warn("recording the upload of outputs failed", "err", err)
		}
	}
	// The report sent: the stored one, with the log's end when it rides
	// along (never stored: what the server lacks is read again at each
	// try).
	report := p.Report
	var ship *LogShipper
	if p.LogPath != "" {
		ship = NewLogShipper(c, p.Ref, p.LogPath)
		ship.Offset = p.LogOffset
		ship.Max = p.LogMax
		if logInReport {
			// A log that cannot be read here is ShipAll's to say.
			report.Log, _ = ship.Tail(node.MaxReportLog)
		}
		if report.Log == nil {
			if err := ship.ShipAll(ctx); err != nil && !isAnswer(err) {
				return nil, fmt.Errorf("%w: %v", errUnreachable, err)
			}
		}
	}
	resp, err := c.Report(ctx, p.Ref, &report)
	if report.Log != nil && core.ErrorCode(err) == core.EINVALID {
		// A server that does not take a log in a report (an older one,
		// reached after one that does): the log goes apart, as before,
		// and the report again without it.
		if err := ship.ShipAll(ctx); err != nil && !isAnswer(err) {
			return nil, fmt.Errorf("%w: %v", errUnreachable, err)
		}
		resp, err = c.Report(ctx, p.Ref, &p.Report)
	}
	if err != nil && !isAnswer(err) {
		return nil, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	o.Done(p.Ref)
	if err != nil {
		log.Warn("result refused", "job", p.JobName, "attempt", p.Ref.AttemptID, "state", p.Report.State, "err", err)
		return nil, nil
	}
	// Accepted: no line here. The rank that delivers its own result at
	// once says so in its "rank ended" line, and the agent's delivery
	// loop logs what it delivers later; a line here as well was the
	// third of a quick rank's lines.
	return resp, nil
}

// isAnswer reports whether err is the server's answer (a refusal) rather
// than a failure to reach it; transient answers (an internal error, a full
// store disk) count as not reached, since a retry may succeed.
func isAnswer(err error) bool {
	var se *core.Error
	return errors.As(err, &se) && !core.Transient(se.Code)
}

// UploadOutputs packs a rank's outputs folder and uploads it through c,
// once. With sameOwner (work that runs as an account of its own owns its
// outputs) a file of anyone else's there is a hard link the agent must not
// read, and is left out.
func UploadOutputs(ctx context.Context, c *client.AgentClient, ref node.RankRef, outDir string, sameOwner bool) error {
	pr, pw := io.Pipe()
	go func() {
		_, err := archive.Pack(pw, outDir, archive.PackOptions{SameOwner: sameOwner})
		pw.CloseWithError(err)
	}()
	err := c.PutOutputs(ctx, ref, pr)
	pr.Close()
	return err
}

// dirHasEntries reports whether a folder holds anything: a file, or a
// folder even empty (an output the job declared and left empty is
// uploaded as such, and the pipeline step that reads it gets an empty
// folder rather than waiting for outputs that never come).
func dirHasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

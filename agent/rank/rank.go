package rank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/msi"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/plainfile"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// Rank is one rank of an attempt running on this node.
type Rank struct {
	n    Node
	t    *node.AgentTask
	dir  string
	mu   sync.Mutex
	run_ rankProcs
	// cancelPrep ends the preparation of the rank's image when the rank
	// is stopped before it starts.
	cancelPrep context.CancelFunc
	// stopReason is set when the server stops the rank before its process
	// starts.
	stopReason string
	// msi is the rank's managed identity endpoint, when the task has
	// identities; it runs while the processes do.
	msi *msi.Endpoint
	// loopbacks are the listeners the rank's containers on a subnet
	// have on their own loopback (see loopback.go); closed with the
	// rank. loopMu guards them: they are opened while mu is held (the
	// rank's start).
	loopMu    sync.Mutex
	loopbacks []io.Closer
	// account is the OS account the rank's processes run as, and
	// accountEnv its HOME, USER and LOGNAME (set by prepare).
	account    *runas.Account
	accountEnv map[string]string
	// ns releases the network namespace the rank's host processes run
	// in, when they run in one (see netns.go); called with the rank's end.
	ns func()
	// netNS is that namespace, once acquired (before the inputs are
	// fetched, through it).
	netNS *netns.NS
	// dataMu guards what the rank holds of the node's data: its cache
	// entries, the read-only mounts of its inputs (and their sources, for
	// a container's volumes), and the mounts still to make (data.go).
	dataMu   sync.Mutex
	entries  []*datacache.Entry
	mounts   []string
	roInputs [][2]string
	pending  [][2]string
	// inputEnv is what each input's ${{inputs.X}} became, for its
	// AZURE_ML_INPUT_X variable.
	inputEnv map[string]string
	// parallelEnv runs Shoal's driver, for a rank of a parallel job
	// (parallel.go).
	parallelEnv map[string]string
}

// New is rank t on node n, not started yet (see Run).
func New(n Node, t *node.AgentTask) *Rank {
	return &Rank{n: n, t: t, dir: AttemptDir(n.RunDir, t)}
}

// AttemptDir is where one rank of an attempt runs, under the node's run
// dir.
func AttemptDir(runDir string, t *node.AgentTask) string {
	return filepath.Join(runDir, "attempts", fmt.Sprintf("%s-r%d", t.AttemptID, t.Rank))
}

// Dir is the rank's folder (AttemptDir).
func (r *Rank) Dir() string { return r.dir }

// Stop ends the rank's processes for reason, or, before they start, makes
// the rank end without starting them.
func (r *Rank) Stop(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run_ != nil {
		r.run_.Stop(reason)
	} else if r.stopReason == "" {
		r.stopReason = reason
		if r.cancelPrep != nil {
			r.cancelPrep()
		}
	}
}

// logPath is the rank's log, written by the agent and by the rank's
// processes through the file the agent opens for them. It sits in the
// rank's folder, which is the agent's (runas.Account.LetThrough: the
// job's account passes through it to its own folders but cannot list it
// or write in it, and no other account enters it), as root's 0600 file, and so do
// the agent's other files of the rank beside it: its services' output
// (services.go), its ssh service's host key, its container's start gates.
// A folder of their own (user_logs, until 2026-12-03) was one more inode
// a job, made for every job on a node running hundreds a second.
func (r *Rank) logPath() string { return filepath.Join(r.dir, "std_log.txt") }

// earlierLogPath is where an agent before 2026-12-03 kept the log of a
// rank it started (a folder of its own), if that log is there: a rank
// such an agent left, found by its successor (errStartedBefore), ends
// with the log it wrote, not an empty one. Otherwise logPath.
func (r *Rank) earlierLogPath() string {
	old := filepath.Join(r.dir, "user_logs", "std_log.txt")
	if fi, err := os.Lstat(old); err == nil && fi.Mode().IsRegular() {
		return old
	}
	return r.logPath()
}

// Run prepares the folders, runs the processes, ships logs, and hands the
// result (the outputs, the log's end and the final report) to the agent
// (Agent.Finish).
func (r *Rank) Run(ctx context.Context) {
	t := r.t
	t0 := time.Now()
	log := r.n.Log.With("job", t.JobName, "attempt", t.Attempt, "rank", t.Rank)
	logPath := r.logPath()
	outDir := filepath.Join(r.dir, "outputs")
	// What the rank holds of the node's data (cache entries, read-only
	// mounts) is given back however it ends.
	defer r.releaseData()
	defer r.closeNetwork()
	// Stopping the rank while it fetches its inputs ends the fetch.
	prepCtx, cancelPrep := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancelPrep = cancelPrep
	if r.stopReason != "" {
		cancelPrep()
	}
	r.mu.Unlock()
	cmd, err := r.prepare(prepCtx, outDir)
	r.mu.Lock()
	r.cancelPrep = nil
	r.mu.Unlock()
	cancelPrep()
	if err != nil {
		r.releaseData()
		r.closeNetwork()
		if errors.Is(err, errStartedBefore) {
			logPath = r.earlierLogPath()
		}
		if r.stoppedBeforeStart(ctx, logPath) {
			return
		}
		var de *dataError
		if errors.As(err, &de) {
			// The job's data, not the node: the job fails at once.
			log.Info("an input of the rank could not be had", "err", err)
			r.appendLog(logPath, fmt.Sprintf("shoal agent: %v\n", err))
			r.fail(ctx, logPath, node.RankFailed, de.failure, err.Error())
			return
		}
		log.Warn("preparing the rank failed", "err", err)
		r.appendLog(logPath, fmt.Sprintf("shoal agent: preparing the job failed: %v\n", err))
		r.fail(ctx, logPath, prepareFailureState(err), node.RankPrepareFailed, "preparing failed: "+err.Error())
		return
	}
	var image string
	if inContainer, err := wantsContainer(t, r.n.NodeImage); err != nil {
		r.appendLog(logPath, "shoal agent: "+err.Error()+"\n")
		r.fail(ctx, logPath, node.RankFailed, node.RankImageFailed, err.Error())
		return
	} else if inContainer {
		if image, err = r.prepareImage(ctx, logPath); err != nil {
			if r.stoppedBeforeStart(ctx, logPath) {
				return
			}
			state, failure := ctrhost.ImageFailure(err)
			log.Warn("preparing the rank's image failed", "err", err)
			r.appendLog(logPath, fmt.Sprintf("shoal agent: preparing the image failed: %v\n", err))
			r.fail(ctx, logPath, state, failure, "image: "+err.Error())
			return
		}
	}
	if len(t.Identities) > 0 {
		ref := t.RankRef
		mint := func(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error) {
			return r.n.Client.Token(ctx, ref, req)
		}
		r.msi, err = msi.Start(ctx, t.Identities, mint, log)
		if err != nil {
			log.Warn("starting the identity endpoint failed", "err", err)
			r.appendLog(logPath, fmt.Sprintf("shoal agent: starting the managed identity endpoint failed: %v\n", err))
			r.fail(ctx, logPath, node.RankLost, node.RankPrepareFailed, "preparing failed: "+err.Error())
			return
		}
		defer r.msi.Close()
	}
	r.mu.Lock()
	if r.stopReason != "" {
		reason := r.stopReason
		r.mu.Unlock()
		end := r.n.Clock.Now()
		r.n.Agent.Finish(ctx, &files.Result{Ref: t.RankRef, JobName: t.JobName, LogPath: logPath,
			Report: node.RankReport{State: stateFor(reason, -1), Reason: reason + " before start", EndTime: &end}})
		return
	}
	env := r.env(outDir)
	for k, v := range r.accountEnv {
		env[k] = v
	}
	task := runner.Task{
		AttemptID: t.AttemptID, JobName: t.JobName, Attempt: t.Attempt, Rank: t.Rank, NodeCount: t.NodeCount,
		ProcessesPerNode: t.ProcessesPerNode, Distribution: t.Distribution, MasterAddr: t.MasterAddr, MasterPort: t.MasterPort,
		WorkerCount: t.WorkerCount, ParameterServerCount: t.ParameterServerCount, Peers: t.Peers,
		Command: cmd, Dir: filepath.Join(r.dir, "code"), Env: env, LogPath: logPath,
		Timeout: time.Duration(t.TimeoutSeconds) * time.Second, KillGrace: t.KillGrace,
		Credential: r.account.Apply(nil).Credential,
		// The start and end the run stamps are the report's: by the
		// clock that stamps the rank's other times.
		Clock: r.n.Clock,
	}
	var run rankProcs
	var crun *ctrhost.Run
	var where []any
	// A namespace the node cannot make is the node's failure, not the
	// job's: the rank is lost and runs again, its retries untouched.
	var netErr error
	if image != "" {
		crun, err = r.startInContainer(ctx, task, image, outDir)
		if err == nil {
			run, where = crun, []any{"image", image, "containers", crun.IDs()}
		}
	} else {
		var hrun *runner.Run
		if netErr = r.ownNetwork(&task, logPath); netErr != nil {
			err = netErr
		} else {
			hrun, err = runner.Start(task)
		}
		if err == nil {
			run, where = hrun, []any{"pids", hrun.Pids()}
		}
	}
	if err != nil {
		r.mu.Unlock()
		r.closeLoopbacks()
		r.closeNetwork()
		r.appendLog(logPath, fmt.Sprintf("shoal agent: starting the command failed: %v\n", err))
		if netErr != nil {
			log.Warn("the rank's network namespace failed", "err", err)
			r.fail(ctx, logPath, node.RankLost, node.RankStartFailed, "start failed: "+err.Error())
			return
		}
		r.fail(ctx, logPath, node.RankFailed, node.RankStartFailed, "start failed: "+err.Error())
		return
	}
	r.run_ = run
	r.mu.Unlock()
	started := time.Since(t0)
	// Where the processes run and how long their start took go into the
	// rank's one line, "rank ended", for a rank that ends within
	// runningReportDelay, and into a "rank started" line of their own
	// for one that runs on (whose end may be hours away). Three lines a
	// rank (started, ended, the result reported) were 4 % of a node's
	// CPU running hundreds of quick jobs a second (bench/jobs
	// --agent-cpuprofile).
	startAttrs := append(where, "start_took", started)
	ship := files.NewLogShipper(r.n.Client, t.RankRef, logPath)
	ship.Max = t.MaxLogBytes
	shipCtx, stopShip := context.WithCancel(ctx)
	stopServices := r.serveServices(shipCtx, task, run, crun)
	// Running is reported while the processes run: a server that is away
	// must not hold the rank up, and the final report supersedes it. A
	// command that ends within runningReportDelay gets no Running report
	// at all: its final report carries the start time, and one report in
	// place of two is what lets a node run hundreds of quick jobs a second.
	// Nor does it get the log shipper's or the GPU sampler's goroutines:
	// neither would have done anything yet (the shipper's first poll is
	// at 100 ms, a GPU sample's after its interval), and starting and
	// ending them, their timers and their wake-ups were a quick job's
	// largest share of the agent's scheduling (bench/jobs
	// --agent-cpuprofile). What a quick job logged is shipped by the
	// final report's delivery, as any job's last bytes are.
	quick := time.NewTimer(runningReportDelay)
	var res runner.Result
	select {
	case <-run.Done():
		quick.Stop()
		res = run.Wait()
		stopServices()
		stopShip()
	case <-quick.C:
		log.Info("rank started", startAttrs...)
		startAttrs = nil
		res = r.watch(ctx, shipCtx, run, ship, stopServices, stopShip)
	}
	if r.msi != nil {
		r.msi.Close()
	}
	r.closeLoopbacks()
	r.closeNetwork()
	if image != "" {
		r.n.Ctr.Evict(ctx)
	}
	code := res.ExitCode
	// When the processes started: stamped by the run just before the
	// first one did. Stamped here, once they were running, it was late by
	// the fork, the exec and this goroutine's turn, and a `sleep 0.3`
	// reported as running 297.6 ms (e2e TestJobTimesAndRecreatedCompute).
	startedAt := res.StartedAt
	if r.n.Agent.TakenBack(res.Reason, code) {
		res.Reason = "preempted"
	}
	artifacts := false
	wantArtifacts := !slices.Contains(t.Outputs, job.ArtifactsOutput)
	rankEnd, err := readRankEnd(r.dir, wantArtifacts)
	if err == nil && wantArtifacts {
		// Kept whatever the end: a failed job's ./logs are what tells why.
		artifacts, err = keepArtifacts(r.dir, rankEnd.keep, t.Rank, t.NodeCount, r.account)
	}
	if err != nil && wantArtifacts {
		log.Warn("keeping the job's ./outputs and ./logs failed", "err", err)
		r.appendLog(logPath, fmt.Sprintf("shoal agent: keeping ./outputs and ./logs as the job's artifacts failed: %v\n", err))
	}
	// An outputs folder known empty now is not looked at again when the
	// result is delivered: there is nothing to upload.
	resultOutputs := outDir
	if rankEnd.outputsEmpty && !artifacts {
		resultOutputs = ""
	}
	r.releaseData()
	state, reason, failure := stateFor(res.Reason, code), res.Reason, job.RankFailure("")
	if state == node.RankCompleted {
		// Outputs whose YAML names a datastore go there before the rank
		// is reported ended, as Azure uploads them on completion.
		if err := r.uploadOutputs(ctx, outDir); err != nil {
			log.Info("an output of the rank could not be uploaded", "err", err)
			r.appendLog(logPath, fmt.Sprintf("shoal agent: %v\n", err))
			state, reason, failure = node.RankFailed, err.Error(), node.RankOutputFailed
			if !errors.As(err, new(*dataError)) {
				// The node's failure (its network namespace): the job
				// runs again elsewhere, not blamed.
				state, failure = node.RankLost, node.RankPrepareFailed
			}
		}
	}
	end := r.n.Clock.Now()
	delivered := r.n.Agent.Finish(ctx, &files.Result{
		Ref: t.RankRef, JobName: t.JobName, OutputsDir: resultOutputs, LogPath: logPath, LogOffset: ship.Offset, LogMax: ship.Max,
		Report: node.RankReport{State: state, ExitCode: &code, Reason: reason, Failure: failure, StartTime: &startedAt, EndTime: &end,
			Artifacts: artifacts},
	})
	// The rank's one line (see startAttrs): delivered says the server
	// had the result at once; one it did not have is delivered later by
	// the agent's delivery loop, which says so in a line of its own.
	log.Info("rank ended", append(startAttrs, "reason", res.Reason, "exit_code", code, "state", state, "delivered", delivered)...)
}

func stateFor(reason string, code int) string {
	switch reason {
	case "completed":
		return node.RankCompleted
	case "timeout":
		return node.RankTimedOut
	case "preempted":
		return node.RankPreempted
	case "canceled", "superseded":
		return node.RankCanceled
	}
	if code == 0 {
		return node.RankCompleted
	}
	return node.RankFailed
}

func intPtr(i int) *int { return &i }

// runningReportDelay is how long a rank's processes run before the agent
// reports them Running: quicker ones are reported once, when they end.
// Short enough that nobody watching a job notices. A variable so that
// tests choose which path a rank takes without racing a timer.
var runningReportDelay = 20 * time.Millisecond

// runningReportGrace is how long a rank that has ended waits for its
// Running report to get through before its final report goes.
const runningReportGrace = 2 * time.Second

// fail ends a rank that never ran its command, as Failed (the job's own
// failure: it spends a retry) or Lost (this machine or the server failed:
// the job runs again, its retries untouched).
func (r *Rank) fail(ctx context.Context, logPath, state string, failure job.RankFailure, reason string) {
	end := r.n.Clock.Now()
	rep := node.RankReport{State: state, Reason: reason, Failure: failure, EndTime: &end}
	if state == node.RankFailed {
		rep.ExitCode = intPtr(-1)
	}
	r.n.Agent.Finish(ctx, &files.Result{Ref: r.t.RankRef, JobName: r.t.JobName, LogPath: logPath, Report: rep})
}

// errStartedBefore: an earlier agent process on this node started the
// rank (its folder is there); it is not run again.
var errStartedBefore = errors.New("this node's agent was restarted after it had started this rank, so the rank may have run: it is not run a second time, and the job runs again as a new attempt")

// prepareFailureState says whose fault a failed preparation is: the job's
// when the server refused what it asked for (an input or artifact that
// does not exist, a bad reference) or its archive was refused for safety
// (an entry escaping its folder, a link out of it, past the limits: every
// node would refuse it again), else the infrastructure's (the server
// unreachable or failing, this machine's disk).
func prepareFailureState(err error) string {
	if errors.Is(err, archive.ErrUnsafe) || errors.Is(err, archive.ErrLimit) {
		return node.RankFailed
	}
	switch core.ErrorCode(err) {
	case core.ENOTFOUND, core.EINVALID, core.EFORBIDDEN:
		return node.RankFailed
	}
	return node.RankLost
}

// prepare creates the folders, fetches code, inputs and earlier outputs,
// and returns the command with every ${{...}} reference substituted.
func (r *Rank) prepare(ctx context.Context, outDir string) (_ string, err error) {
	t := r.t
	acct, err := r.n.Accounts.For(files.RunAsOf(t))
	if err != nil {
		return "", err
	}
	r.account = acct
	if r.accountEnv, err = files.AccountEnv(r.n.RunDir, acct); err != nil {
		return "", err
	}
	codeDir := filepath.Join(r.dir, "code")
	inputsDir := filepath.Join(r.dir, "inputs")
	// The attempt's folder is the agent's. While the agent fills it (as
	// root) it is closed to everyone (0700): no process of the account,
	// another job of the same user included, can reach what is being
	// unpacked and handed over, and so cannot swap a folder for a link
	// under the hand-over's walk. Once everything below is the account's,
	// the folder opens for the work to pass through to code, inputs and
	// outputs (Account.LetThrough). The agent's own files stay in it, root's and
	// 0600 (logPath), where the account can neither list nor read them.
	//
	// A folder already there was made by an earlier agent process on
	// this node, which started this rank and died before its result was
	// kept: the rank may have run, in part or whole. It is not run a
	// second time (errStartedBefore: the server runs the job again as a
	// new attempt). The agent's memory of the ranks it started
	// (agent.startedRanks) does not survive its restart; the folder does,
	// and the server may still hand the rank out (its Running report had
	// not come, so it looks unstarted). What the earlier run mounted is
	// given back; the folder stays as it was left.
	if _, err := os.Lstat(r.dir); err == nil {
		unmountStale(r.dir)
		return "", errStartedBefore
	}
	// Made here, not found (a link put there meanwhile fails the Mkdir).
	// Its mode is 0700 or closer (the umask only takes away), until
	// Account.LetThrough at the end.
	if err := os.Mkdir(r.dir, 0o700); errors.Is(err, fs.ErrNotExist) {
		// The node's first rank: the attempts folder is not there yet.
		err = files.MkdirMode(r.dir, 0o700)
		if err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	// The inputs folder is made only for a task with file inputs: each
	// folder is an inode to allocate, and on a disk that recently freed
	// many (ext4 without a journal skips those for a minute or more) every
	// one made costs a node running hundreds of jobs a second.
	owned := []string{codeDir, outDir}
	if hasFileInputs(t) {
		owned = append(owned, inputsDir)
	}
	for _, d := range owned {
		// In the folder just made: Mkdir, not MkdirAll (which looks
		// first), one syscall fewer per folder on every job's start.
		if err := os.Mkdir(d, 0o700); err != nil {
			return "", err
		}
	}
	defer func() {
		if err != nil {
			return
		}
		if err = r.own(acct, codeDir, outDir, owned); err != nil {
			return
		}
		if err = r.mountInputs(); err != nil {
			return
		}
		err = acct.LetThrough(r.dir)
	}()
	if t.Code != "" {
		if err := r.fetch(ctx, t.Code, codeDir); err != nil {
			return "", fmt.Errorf("code: %w", err)
		}
	}
	if err := makeArtifactDirs(codeDir); err != nil {
		return "", err
	}
	inputs := map[string]string{}
	names := make([]string, 0, len(t.Inputs))
	for name := range t.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		in := t.Inputs[name]
		if in == nil {
			continue
		}
		if in.Path == "" {
			inputs[name] = job.FormatInputValue(in.Value)
			continue
		}
		dst := filepath.Join(r.dir, "inputs", name)
		if src := t.InputSources[name]; src != nil {
			v, err := r.fetchInput(ctx, name, in, src, dst)
			if err != nil {
				return "", err
			}
			inputs[name] = v
			continue
		}
		if err := r.fetch(ctx, in.Path, dst); err != nil {
			return "", fmt.Errorf("input %s: %w", name, err)
		}
		inputs[name] = dst
		if in.Type == "uri_file" {
			// A file input is an archive holding one file: point at it.
			if entries, err := os.ReadDir(dst); err == nil && len(entries) == 1 {
				inputs[name] = filepath.Join(dst, entries[0].Name())
			}
		}
	}
	r.inputEnv = inputs
	if t.RestoreOutputs {
		body, err := r.n.Client.Restore(ctx, t.RankRef)
		switch {
		case err == nil:
			err = archive.Unpack(body, outDir, archive.Limits{})
			body.Close()
			if err != nil {
				return "", fmt.Errorf("restoring outputs of the earlier attempt: %w", err)
			}
			if !slices.Contains(t.Outputs, job.ArtifactsOutput) {
				if err := restoreArtifacts(r.dir, t.Rank, t.NodeCount); err != nil {
					return "", fmt.Errorf("restoring ./outputs and ./logs of the earlier attempt: %w", err)
				}
			}
		case core.ErrorCode(err) != core.ENOTFOUND:
			return "", fmt.Errorf("restoring outputs of the earlier attempt: %w", err)
		}
	}
	outputs := map[string]string{}
	for _, name := range t.Outputs {
		p := filepath.Join(outDir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return "", err
		}
		outputs[name] = outputPath(t, outDir, name)
	}
	if r.parallelEnv, err = r.prepareParallel(outDir); err != nil {
		return "", err
	}
	return job.ExpandCommand(t.Command, inputs, outputs)
}

// outputPath is where output name is for the command: its folder, or,
// for a uri_file output (t.OutputFiles), the file in it, as Azure ML
// gives a uri_file output's path. A name that is not one plain segment
// is not taken: the folder is the output.
func outputPath(t *node.AgentTask, outDir, name string) string {
	dir := filepath.Join(outDir, name)
	f := t.OutputFiles[name]
	if f == "" || f == "." || f == ".." || strings.ContainsAny(f, "/\\\x00") {
		return dir
	}
	return filepath.Join(dir, f)
}

// hasFileInputs reports whether t has an input fetched into the inputs
// folder (a literal value is substituted in the command instead).
func hasFileInputs(t *node.AgentTask) bool {
	for name, in := range t.Inputs {
		if in == nil || in.Path == "" {
			continue
		}
		if src := t.InputSources[name]; src != nil && in.InputMode() == jobio.ModeDirect {
			continue // the URI itself: nothing fetched
		}
		return true
	}
	return false
}

// fetch downloads an artifact and unpacks it into dst.
func (r *Rank) fetch(ctx context.Context, id, dst string) error {
	body, err := r.n.Client.Artifact(ctx, id)
	if err != nil {
		return err
	}
	defer body.Close()
	return archive.Unpack(body, dst, archive.Limits{})
}

// env is the job's environment: its variables plus Shoal's and Azure ML's
// names for the run.
func (r *Rank) env(outDir string) map[string]string {
	t := r.t
	env := map[string]string{}
	for k, v := range t.EnvironmentVariables {
		env[k] = v
	}
	env["SHOAL_JOB_NAME"] = t.JobName
	env["SHOAL_WORKSPACE"] = t.Workspace
	env["SHOAL_ATTEMPT"] = strconv.Itoa(t.Attempt)
	env["SHOAL_ATTEMPT_ID"] = t.AttemptID
	env[procmark.NodeID] = r.n.NodeID
	env[procmark.NodeDir] = r.n.WorkDir
	env["SHOAL_NODE_RANK"] = strconv.Itoa(t.Rank)
	env["SHOAL_OUTPUTS_DIR"] = outDir
	env["AZUREML_RUN_ID"] = t.JobName
	env["AZUREML_ARM_WORKSPACE_NAME"] = t.Workspace
	env["AZUREML_CR_NODE_RANK"] = strconv.Itoa(t.Rank)
	for k, v := range r.n.Agent.SDKEnv() {
		env[k] = v
	}
	if tr := t.Tracking; tr != nil {
		// The job's own values of these would send its metrics elsewhere
		// or nowhere: the run's win, as the identity endpoint's do.
		env["MLFLOW_TRACKING_URI"] = strings.TrimRight(r.n.ServerURL, "/") + "/mlflow/v1/workspaces/" + url.PathEscape(t.Workspace)
		env["MLFLOW_TRACKING_TOKEN"] = tr.Token
		env["MLFLOW_RUN_ID"] = t.JobName
		env["MLFLOW_EXPERIMENT_NAME"] = tr.ExperimentName
	}
	if d := r.n.GPUDevices; d != "" {
		// Several nodes may share a host's GPUs: each sees its own.
		env["CUDA_VISIBLE_DEVICES"], env["NVIDIA_VISIBLE_DEVICES"] = d, d
	}
	for _, name := range t.Outputs {
		env["AZUREML_OUTPUT_"+name] = outputPath(t, outDir, name)
		env["AZURE_ML_OUTPUT_"+name] = outputPath(t, outDir, name)
	}
	for name, v := range r.inputEnv {
		// Azure ML's name for where input X is (a direct input's URI).
		env["AZURE_ML_INPUT_"+name] = v
	}
	for k, v := range r.parallelEnv {
		// The driver's own: the job's values of these would run
		// another program in its place.
		env[k] = v
	}
	if r.msi != nil {
		// The identity endpoint's variables win over the job's own: the
		// secret is the rank's.
		for k, v := range r.msi.Env() {
			env[k] = v
		}
	}
	return env
}

// report sends a state change, retrying until the server answers; a
// refusal (a newer attempt replaced this one) ends the retries.
func (r *Rank) report(ctx context.Context, rep *node.RankReport) {
	var resp *node.AgentSyncResponse
	err := retry(ctx, func() (err error) {
		resp, err = r.n.Client.Report(ctx, r.t.RankRef, rep)
		return err
	})
	if err != nil {
		r.n.Log.Warn("report refused", "state", rep.State, "attempt", r.t.AttemptID, "err", err)
		return
	}
	// A report that freed the node may bring its next task.
	for _, t := range resp.Start {
		r.n.Agent.StartRank(ctx, t)
	}
}

func (r *Rank) appendLog(path, line string) {
	_ = os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := plainfile.Open(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(line)
}

// retry calls fn until it succeeds or fails with an answer from the server
// (any *shoal.Error but a transient one, see shoal.Transient); transport errors — the
// server is down or restarting — are retried with backoff, forever, so work
// done while the server was away is reported when it returns.
func retry(ctx context.Context, fn func() error) error {
	backoff := 50 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return nil
		}
		var se *core.Error
		if asShoalError(err, &se) && !core.Transient(se.Code) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// rankProcs is a started rank: its processes on the host (runner.Run) or
// its containers (ctrhost.Run).
type rankProcs interface {
	Done() <-chan struct{}
	Wait() runner.Result
	Stop(reason string)
}

var (
	_ rankProcs = (*runner.Run)(nil)
	_ rankProcs = (*ctrhost.Run)(nil)
)

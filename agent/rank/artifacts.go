package rank

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// artifactDirs are the folders of a job's working directory that Azure ML
// keeps as the job's artifacts: what a job writes to ./outputs and ./logs
// outlives it, as the output named job.ArtifactsOutput.
var artifactDirs = []string{"outputs", "logs"}

// makeArtifactDirs creates ./outputs and ./logs in the rank's code folder
// (its working directory), keeping those the code brought. It runs while
// the rank's folder is closed to everyone but the agent; the code folder
// is handed to the job's account afterwards (prepare), these with it. A
// link or a file of that name in the code is refused: at the rank's end
// the agent moves what is there into the rank's outputs, and must not be
// led elsewhere by a link.
func makeArtifactDirs(codeDir string) error {
	for _, d := range artifactDirs {
		p := codeDir + "/" + d
		// Made first, looked at only when there: most jobs' code has
		// neither, and a trivial job's start is counted in syscalls.
		// The job's own folders (its account gets them): closed to
		// other accounts, as the code folder they sit in is.
		err := os.Mkdir(p, 0o700)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return err
		case !fi.IsDir():
			return core.FieldErrorf("code", "./%s is a %s in the job's code; Shoal keeps ./%s as a folder of the job's %s output, as Azure ML does", d, kindOf(fi), d, job.ArtifactsOutput)
		}
	}
	return nil
}

func kindOf(fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "link"
	}
	return "file"
}

// stagingDir is the folder of the rank's folder (root's, closed to the
// job) where ./outputs and ./logs are gathered before they join the
// rank's outputs.
const stagingDir = ".artifacts"

// keepArtifacts moves what the job left in ./outputs and ./logs into the
// rank's outputs folder, as its job.ArtifactsOutput folder (outputs/ and
// logs/ in it; a rank of a multi-node job keeps its logs under
// logs/rank-N, so that the ranks' logs do not overwrite each other when
// downloaded together, while their outputs/ merge as Azure merges them).
// It reports whether anything was kept: empty folders are not, so that a
// job that writes nothing there uploads nothing.
//
// Every step goes through a Root at the rank's folder, which is the
// agent's: the job's account owns the code and outputs folders in it and
// may have put links there (or left a process that does so now), so no
// step follows a link out of the rank's folder, and the moves rename the
// folders themselves, never what a link names. The gathered folder is
// made where the job cannot reach (stagingDir) and renamed into the
// outputs folder last.
//
// keep is which of them hold something (rankEnd, read before).
func keepArtifacts(rankDir string, keep []string, rank, nodeCount int, acct *runas.Account) (bool, error) {
	if len(keep) == 0 {
		return false, nil
	}
	root, err := os.OpenRoot(rankDir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	if err := root.RemoveAll(stagingDir); err != nil {
		return false, err
	}
	if err := root.Mkdir(stagingDir, 0o700); err != nil {
		return false, err
	}
	for _, d := range keep {
		dst := path.Join(stagingDir, d)
		if d == "logs" && nodeCount > 1 {
			if err := root.Mkdir(dst, 0o700); err != nil {
				return false, err
			}
			dst = path.Join(dst, "rank-"+strconv.Itoa(rank))
		}
		if err := root.Rename("code/"+d, dst); err != nil {
			return false, fmt.Errorf("keeping ./%s: %w", d, err)
		}
	}
	// The job may have written an undeclared folder of that name into
	// its outputs: the artifacts take its place.
	dst := path.Join("outputs", job.ArtifactsOutput)
	if err := root.RemoveAll(dst); err != nil {
		return false, err
	}
	if err := root.Rename(stagingDir, dst); err != nil {
		return false, fmt.Errorf("keeping the artifacts: %w", err)
	}
	// The folders the agent made are the account's, as everything else
	// in the outputs is (a later attempt restores them as its own).
	if acct.Switched() {
		if err := root.Lchown(dst, int(acct.UID), int(acct.GID)); err != nil {
			return false, err
		}
		if nodeCount > 1 {
			_ = root.Lchown(path.Join(dst, "logs"), int(acct.UID), int(acct.GID))
		}
	}
	return true, nil
}

// rankEnd is what a rank's folder held when its processes ended.
type rankEnd struct {
	// keep is which of the job's ./outputs and ./logs hold something
	// (keepArtifacts), when asked for.
	keep []string
	// outputsEmpty says the outputs folder held nothing, and nothing is
	// to be kept into it: there is nothing to upload. False when not
	// known (something to keep, or the folder could not be read).
	outputsEmpty bool
}

// readRankEnd answers keepArtifacts (which of code/outputs and code/logs
// hold something, when artifacts asks) and whether the outputs folder is
// empty, from one open of the rank's folder and with raw system calls:
// through os.Root and os.ReadDir these cost a trivial rank 35 calls (a
// look and an open per folder, and each open's four fcntl and an
// epoll_ctl that Go spends making a file pollable), now 16. Each folder
// is opened without following a link (the job's account owns the code
// folder, and may have put a link in place of ./outputs or ./logs): a
// link, a file or nothing there holds nothing, as before.
func readRankEnd(rankDir string, artifacts bool) (rankEnd, error) {
	var end rankEnd
	dir, err := unix.Open(rankDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return end, &fs.PathError{Op: "open", Path: rankDir, Err: err}
	}
	defer unix.Close(dir)
	if artifacts {
		// The code folder is the agent's making, in its own folder: the
		// job's account cannot put a link in its place.
		if code, err := unix.Openat(dir, "code", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			for _, d := range artifactDirs {
				if holdsEntries(code, d) {
					end.keep = append(end.keep, d)
				}
			}
			unix.Close(code)
		}
	}
	end.outputsEmpty = len(end.keep) == 0 && !holdsEntries(dir, "outputs")
	return end, nil
}

// holdsEntries reports whether name, in the folder open as dir, is a
// folder (not a link to one) holding something other than . and ..;
// false too when it cannot be read.
func holdsEntries(dir int, name string) bool {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [2048]byte // room for entries of names up to 255 bytes
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		// ParseDirent leaves out . and ..
		if _, count, _ := unix.ParseDirent(buf[:n], 1, nil); count > 0 {
			return true
		}
	}
}

// nonEmptyDir reports whether name (under root, not a link) is a folder
// holding something.
func nonEmptyDir(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	if err != nil || !fi.IsDir() {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.ReadDir(1)
	return err == nil
}

// restoreArtifacts puts back the ./outputs and ./logs an earlier attempt
// kept (restored with its outputs, see prepare), so that a job that
// checkpoints to ./outputs, as Azure ML jobs do, resumes from it after a
// preemption. A folder the code already filled keeps the code's. It runs
// while the rank's folder is the agent's alone, through a Root at it, and
// moves real folders only: a link the archive held is left behind (and
// removed with the rest).
func restoreArtifacts(rankDir string, rank, nodeCount int) error {
	root, err := os.OpenRoot(rankDir)
	if err != nil {
		return err
	}
	defer root.Close()
	kept := path.Join("outputs", job.ArtifactsOutput)
	if fi, err := root.Lstat(kept); err != nil || !fi.IsDir() {
		return nil
	}
	for _, d := range artifactDirs {
		src := path.Join(kept, d)
		if d == "logs" && nodeCount > 1 {
			src = path.Join(src, "rank-"+strconv.Itoa(rank))
		}
		fi, err := root.Lstat(src)
		if err != nil || !fi.IsDir() || nonEmptyDir(root, "code/"+d) {
			continue
		}
		if err := root.Remove("code/" + d); err != nil {
			return err
		}
		if err := root.Rename(src, "code/"+d); err != nil {
			return fmt.Errorf("restoring ./%s: %w", d, err)
		}
	}
	return root.RemoveAll(kept)
}

// own hands the folders prepare made (owned: the code and outputs
// folders, and the inputs folder when there is one) to the rank's
// account, with everything in them. A folder into which nothing was
// fetched or restored holds only what prepare made, and is handed over
// entry by entry (the code folder of a task without code, with its
// ./outputs and ./logs; an outputs folder with no declared outputs; in
// neither case an earlier attempt's outputs restored, which fill both): walking it cost a trivial
// job an open, reads and a close of each folder, in syscalls that
// bench/jobs --agent-cpuprofile showed among a job's largest. Any other
// is walked.
func (r *Rank) own(acct *runas.Account, codeDir, outDir string, owned []string) error {
	restored := r.t.RestoreOutputs
	for _, d := range owned {
		var err error
		switch {
		case d == codeDir && r.t.Code == "" && !restored:
			err = acct.Own(d)
			for _, a := range artifactDirs {
				if err == nil {
					err = acct.Own(d + "/" + a)
				}
			}
		case d == outDir && len(r.t.Outputs) == 0 && !restored:
			err = acct.Own(d)
		default:
			err = acct.OwnTree(d)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

package runhistory

import (
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Log file names, as Azure's common runtime names a job's user logs: one
// process's is user_logs/std_log.txt; with several, each process's is
// user_logs/std_log_process_<rank>.txt, and azure-ai-ml streams the
// first (its pattern matches rank 0 alone).
const (
	singleLog  = "user_logs/std_log.txt"
	rankPrefix = "user_logs/std_log_process_"
	rankSuffix = ".txt"
)

// signPurpose keeps log URL signatures apart from every other MAC the
// server's key makes.
const signPurpose = "shoal/runhistory/log-url"

// LogFileName is the name of a rank's log among ranks.
func LogFileName(rank, ranks int) string {
	if ranks <= 1 {
		return singleLog
	}
	return rankPrefix + strconv.Itoa(rank) + rankSuffix
}

// rankOf is the rank a log file name names; false for any other name.
func rankOf(file string) (int, bool) {
	if file == singleLog {
		return 0, true
	}
	n, ok := strings.CutPrefix(file, rankPrefix)
	if !ok {
		return 0, false
	}
	n, ok = strings.CutSuffix(n, rankSuffix)
	// digits only, no sign, no leading zero: one name per rank
	if !ok || n == "" || len(n) > 6 || strings.Trim(n, "0123456789") != "" || (len(n) > 1 && n[0] == '0') {
		return 0, false
	}
	rank, err := strconv.Atoi(n)
	return rank, err == nil
}

// logFiles are the log URLs of a job's latest attempt, one per rank,
// each signed for this job's file until the lifetime passes; empty
// before the job's first attempt. A pipeline or a sweep has its
// timeline instead (parentlog.go).
func (h *Handlers) logFiles(j *job.Job, attempts []*job.Attempt) map[string]string {
	out := map[string]string{}
	expires := h.cfg.Clock.Now().Add(h.cfg.LogURLLifetime)
	if name := parentLogName(j); name != "" {
		out[name] = h.SignedLogURL(j, name, expires)
		return out
	}
	if len(attempts) == 0 {
		return out
	}
	ranks := len(attempts[len(attempts)-1].Ranks)
	if ranks == 0 {
		ranks = j.InstanceCount()
	}
	for rank := range ranks {
		file := LogFileName(rank, ranks)
		out[file] = h.SignedLogURL(j, file, expires)
	}
	return out
}

// SignedLogURL is the URL of a job's log file that reads it without a
// credential until expires.
func (h *Handlers) SignedLogURL(j *job.Job, file string, expires time.Time) string {
	path := "/history/v1.0/logs/" + url.PathEscape(strings.ToLower(j.Workspace)) + "/" + url.PathEscape(j.Name) + "/" + file
	return strings.TrimRight(h.cfg.PublicURL(), "/") + path + "?" + SignLog(h.cfg.Key, j.Workspace, j.Name, j.CreatedOn, file, expires)
}

// SignLog is the query of a log URL: its expiry (se, Unix seconds) and
// the signature (sig) over the workspace, the job, the job's creation
// time, the file and the expiry, so that the URL reads that one log and
// nothing else. The creation time is signed, not sent: a job of the
// name in a workspace deleted and created again under its name is
// another job, which the URL does not read.
func SignLog(key Signer, ws, jobName string, created time.Time, file string, expires time.Time) string {
	se := strconv.FormatInt(expires.Unix(), 10)
	sig := base64.RawURLEncoding.EncodeToString(key.MAC(signPurpose, signedMessage(ws, jobName, created, file, se)))
	return url.Values{"se": {se}, "sig": {sig}}.Encode()
}

// signedMessage frames each field with its length, so that no two
// (workspace, job, creation, file, expiry) tuples sign the same bytes.
func signedMessage(ws, jobName string, created time.Time, file, se string) []byte {
	var b strings.Builder
	for _, f := range []string{strings.ToLower(ws), jobName, strconv.FormatInt(created.UnixMicro(), 10), file, se} {
		fmt.Fprintf(&b, "%d:%s;", len(f), f)
	}
	return []byte(b.String())
}

// SignedLog serves SignedLogPattern: the log file a signed URL names,
// while its signature holds and it has not expired. It takes no
// credential (azure-ai-ml sends none). A job that does not exist is the
// signature's refusal, not a 404: the URL's holder learns nothing of
// jobs it was not signed for.
func (h *Handlers) SignedLog(w http.ResponseWriter, r *http.Request) {
	ws, jobName, file := r.PathValue("ws"), r.PathValue("job"), r.PathValue("file")
	q := r.URL.Query()
	// What needs no job first (presence, expiry, the signature's form):
	// an anonymous caller costs a store read only with a URL that could
	// be good.
	if err := h.checkSignature(q, ws, jobName, time.Time{}, file); err != nil && err != errLogSignature {
		writeError(w, err)
		return
	}
	j, err := h.cfg.Jobs.FindJob(r.Context(), ws, jobName)
	if core.ErrorCode(err) == core.ENOTFOUND {
		writeError(w, errLogSignature)
		return
	} else if err != nil {
		writeError(w, err)
		return
	}
	if err := h.checkSignature(q, ws, jobName, j.CreatedOn, file); err != nil {
		writeError(w, err)
		return
	}
	h.serveJobLog(w, r, j, file)
}

// errLogSignature is the refusal of a log URL signed for another log.
var errLogSignature = core.Errorf(core.EFORBIDDEN, "the log URL's signature does not match this log")

// checkSignature checks a log URL's expiry and signature for the log
// file of the job created at created.
func (h *Handlers) checkSignature(q url.Values, ws, jobName string, created time.Time, file string) error {
	se, sig := q.Get("se"), q.Get("sig")
	if se == "" || sig == "" {
		return core.Errorf(core.EUNAUTHORIZED, "the log URL has no signature (se and sig): read the run's details for a signed URL")
	}
	exp, err := strconv.ParseInt(se, 10, 64)
	if err != nil {
		return core.Errorf(core.EFORBIDDEN, "the log URL's expiry se=%q is not a time", se)
	}
	if now := h.cfg.Clock.Now(); !now.Before(time.Unix(exp, 0)) {
		return core.Errorf(core.EFORBIDDEN, "the log URL expired at %s: read the run's details again for a fresh one", time.Unix(exp, 0).UTC().Format(time.RFC3339))
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return core.Errorf(core.EFORBIDDEN, "the log URL's signature is not base64")
	}
	want := h.cfg.Key.MAC(signPurpose, signedMessage(ws, jobName, created, file, se))
	if !hmac.Equal(got, want) {
		return errLogSignature
	}
	return nil
}

// Log is GET …/runs/{id}/logs/{file...}: a log file for a caller who may
// read the workspace's jobs (the route checks it).
func (h *Handlers) Log(w http.ResponseWriter, r *http.Request) {
	j, err := h.cfg.Jobs.FindJob(r.Context(), r.PathValue("ws"), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	h.serveJobLog(w, r, j, r.PathValue("file"))
}

// serveJobLog writes the whole text of a rank's log of the job's latest
// attempt, as `shoal job logs` shows it; 404 before there is one, which
// azure-ai-ml reads as an empty log.
func (h *Handlers) serveJobLog(w http.ResponseWriter, r *http.Request, j *job.Job, file string) {
	if name := parentLogName(j); name != "" {
		if file != name {
			writeError(w, core.Errorf(core.ENOTFOUND, "log file %q: %s %s runs nothing itself; its log is %s, its children's jobs have theirs", file, j.Type, j.Name, name))
			return
		}
		text, err := h.parentLog(r.Context(), j)
		if err != nil {
			writeError(w, err)
			return
		}
		setTextHeaders(w)
		_, _ = w.Write(text)
		return
	}
	rank, ok := rankOf(file)
	if !ok {
		writeError(w, core.Errorf(core.ENOTFOUND, "log file %q: a run's logs are %s or %s<rank>%s", file, singleLog, rankPrefix, rankSuffix))
		return
	}
	if j.AttemptCount == 0 {
		writeError(w, core.Errorf(core.ENOTFOUND, "job %s has not started: it has no log yet", j.Name))
		return
	}
	f, err := h.cfg.Logs.OpenLog(j.Workspace, j.Name, j.AttemptCount, rank)
	if err != nil {
		writeError(w, err)
		return
	}
	defer f.Close()
	setTextHeaders(w)
	_, _ = io.Copy(w, f)
}

// setTextHeaders: a log is text, never sniffed, never cached (a signed
// URL's answer changes while the job runs).
func setTextHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
}

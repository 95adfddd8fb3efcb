package asset

import (
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// Azure's notebooks register a model from what a job wrote:
// Model(path="azureml://jobs/<job>/outputs/artifacts/paths/<p>") after a
// sweep (its best trial's MLflow model), or a job's named output
// (azureml://jobs/<job>/outputs/<output>/paths/<p>). The URI names a job,
// not a place; the service resolves it to the datastore path where that
// job's artifacts or output lie (ParseJobOutputURI here, the job lookup
// in service/dataassets), so the version records a place jobs can read.

// JobOutputURI is a parsed azureml://jobs/<job>/outputs/<output>[/paths/<path>].
type JobOutputURI struct {
	// Job is the job's name.
	Job string
	// Output is the output's name; "artifacts" is the job's artifacts
	// (what it wrote under ./outputs and ./logs, and MLflow's).
	Output string
	// Path is the path inside the output ("" for all of it), without a
	// leading '/'; a trailing '/' is kept.
	Path string
}

// jobURIPrefix starts every job output URI (compared case-insensitively).
const jobURIPrefix = "azureml://jobs/"

// IsJobOutputURI reports whether p is written as a job output URI.
func IsJobOutputURI(p string) bool {
	p = strings.TrimSpace(p)
	return len(p) >= len(jobURIPrefix) && strings.EqualFold(p[:len(jobURIPrefix)], jobURIPrefix)
}

// ParseJobOutputURI parses a job output URI, refusing (naming field) one
// without a job or output, with anything but paths/ after the output, or
// with a segment that would leave the output ('..', encoded '/', '\' or
// NUL).
func ParseJobOutputURI(field, p string) (JobOutputURI, error) {
	var u JobOutputURI
	s := strings.TrimSpace(p)
	if !IsJobOutputURI(s) {
		return u, core.FieldErrorf(field, "%q is not a job output URI (azureml://jobs/<job>/outputs/<output>/paths/<path>)", core.Short(p))
	}
	rest := s[len(jobURIPrefix):]
	if strings.ContainsAny(rest, "?#\\\x00") {
		return u, core.FieldErrorf(field, "%q must not contain '?', '#', backslashes or NUL characters", core.Short(p))
	}
	segs := strings.Split(rest, "/")
	for _, seg := range segs {
		dec, err := url.PathUnescape(seg)
		if err != nil || dec == ".." || dec == "." || strings.Contains(dec, "/") {
			return u, core.FieldErrorf(field, "%q must not contain '.' or '..' segments or encoded '/': a path stays inside the job's output", core.Short(p))
		}
	}
	if len(segs) < 3 || segs[0] == "" || !strings.EqualFold(segs[1], "outputs") || segs[2] == "" {
		return u, core.FieldErrorf(field, "%q names no job and output: write azureml://jobs/<job>/outputs/<output>/paths/<path> (artifacts is the job's artifacts)", core.Short(p))
	}
	u.Job, u.Output = segs[0], segs[2]
	if len(segs) == 3 || len(segs) == 4 && segs[3] == "" {
		return u, nil
	}
	if !strings.EqualFold(segs[3], "paths") {
		return u, core.FieldErrorf(field, "%q: after the output comes paths/<path>, not %q", core.Short(p), core.Short(segs[3]))
	}
	u.Path = strings.TrimLeft(strings.Join(segs[4:], "/"), "/")
	return u, nil
}

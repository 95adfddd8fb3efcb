package node

import "github.com/shoal-ml/shoal/domain/job"

// Rank failures of a job's data (issue 36): the job's own, as an image
// that cannot be had is (RankImageFailed): another attempt or another
// node would meet the same source, so the job fails at once with the
// source's words, spending no retry and losing no node.
const (
	// RankInputFailed: an input could not be fetched (not found, a
	// refused credential, an unreachable source, a URL the job may not
	// reach, larger than the node's data cache).
	RankInputFailed job.RankFailure = "input_failed"
	// RankOutputFailed: the rank's command succeeded but an output could
	// not be uploaded to the datastore its YAML names.
	RankOutputFailed job.RankFailure = "output_failed"
)

// JobsOwnFailure reports whether f is a failure another attempt would
// meet again (the image, an input, an output's datastore): the job
// fails at once, the node is not to blame.
func JobsOwnFailure(f job.RankFailure) bool {
	return f == RankImageFailed || f == RankInputFailed || f == RankOutputFailed
}

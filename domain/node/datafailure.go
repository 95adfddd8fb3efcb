package node

import "github.com/shoal-ml/shoal/domain/job"

// RankInputFailed: an input of the rank could not be had (a data asset
// or datastore deleted since the job was submitted, a credential refused,
// a source unreachable or answering an error), or an output's datastore
// could not be resolved. The job fails at once with the source's words,
// spending no retry; the node is not lost.
const RankInputFailed job.RankFailure = "input_failed"

package node

import "github.com/shoal-ml/shoal/domain/job"

// RankOutputFailed: the rank's command succeeded but an output could
// not be uploaded to the datastore its YAML names (a refused
// credential, an unreachable or missing container or bucket). The job
// fails at once with the datastore's words, spending no retry, as for
// an input (RankInputFailed); the node is not lost.
const RankOutputFailed job.RankFailure = "output_failed"

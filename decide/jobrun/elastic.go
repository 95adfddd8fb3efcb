package jobrun

import "github.com/shoal-ml/shoal/domain/job"

// Elastic reports whether rank of j may end Lost or Preempted without
// ending its attempt: a parallel job's ranks other than 0 share the
// job's mini-batches through its ledger, so the others take over what it
// held. Rank 0 writes the job's outputs: its loss ends the attempt, and
// the next one skips every finished mini-batch.
func Elastic(j *job.Job, rank int) bool {
	return j.Parallel != nil && rank != 0
}

// rankLeft records that an elastic rank ended while its attempt goes on.
func rankLeft(o *Output, rs *job.RankStatus) {
	o.emit(CodeRankLeft, "rank %d on node %s %s: the other ranks take over its mini-batches", rs.Rank, rs.NodeID,
		map[string]string{job.AttemptPreempted: "was preempted", job.AttemptLost: "was lost"}[rs.Status])
}

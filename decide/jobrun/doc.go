// Package jobrun is the job and attempt state machine: Step moves a job
// and its current attempt forward on one event (a rank's report, a lost
// node, a cancel request) and says what the caller must do about it.
//
// It is pure, as instance.Step is: no store, no clock (the time is
// given), no I/O. The services load the job, its attempt and the node,
// call Step, then write what it returns and carry out its effects (free
// the node, mark it preempted, wake agents, record events), so that the
// answer to "where does an attempt end?" is this package.
package jobrun

package sqlstore

import (
	"time"

	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/queuewatch"
)

// ListQueuedJobsCreated implements store.Tx (package queuewatch).
func (t *tx) ListQueuedJobsCreated(after, upTo time.Time, limit int) ([]store.QueuedJobRef, error) {
	return queuewatch.Created(querier{t}, after, upTo, limit)
}

// QueueSummaries implements store.Tx (package queuewatch).
func (t *tx) QueueSummaries() ([]store.QueueSummary, error) {
	return queuewatch.Summaries(querier{t})
}

// Package storage enforces a workspace's storage quota on the writes of
// its files: uploads of artifacts, ranks' outputs and logs (jobs' and
// instances'). Each write reserves its bytes before it stores them
// (reserve.go), so that parallel writes cannot together pass the quota.
// It is a request service of its own, over shoal.Store and shoal.Files,
// so that the agent protocol, computes and the job services share one
// table of reservations without linking one another.
package storage

import "github.com/shoal-ml/shoal/store"

// Config wires a Service.
type Config struct {
	// Store holds the workspaces' limits (their storage quotas).
	Store store.Store
	// Files keeps the files and measures a workspace's usage; nil
	// refuses uploads.
	Files store.Files
}

// Service writes a workspace's files within its storage quota.
type Service struct {
	store store.Store
	files store.Files
	// reservations are the storage quota's bytes in flight per
	// workspace (uploads and log writes under way on this server).
	reservations storageReservations
}

// New returns the storage service for cfg.
func New(cfg Config) *Service {
	return &Service{store: cfg.Store, files: cfg.Files}
}

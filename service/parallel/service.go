// Package parallel keeps parallel jobs' ledgers (domain/parallel): it
// takes a job's plan, leases its mini-batches to the ranks of the job's
// current attempt lowest index first, records each try's rows or error,
// gives back the leases of a rank lost or of an attempt that ended, fails
// a mini-batch after its last try and stops the job when an error
// threshold passes, keeps the files ranks post, and writes the rows and
// errors rank 0 turns into the job's outputs. Every change is one store
// transaction, whose time (the store's injected clock) is the only time
// it reads: leases expire and rates are measured by it.
package parallel

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/store"
)

// DefaultLeaseGrace is added to retry_settings.timeout before a lease is
// taken back: the driver kills a run at the timeout and reports it, so
// a lease outliving the grace too belongs to a rank that stopped
// answering.
const DefaultLeaseGrace = 30 * time.Second

// DefaultMaxFilesBytes bounds one post of files.
const DefaultMaxFilesBytes = 1 << 30

// DefaultMaxUnpackedBytes bounds the files of one post once unpacked:
// the driver gzips its posts, and a post of zeros would otherwise make
// the server inflate a thousand times what it took (and rank 0 write it).
// Text outputs compress some tenfold at the driver's level; 8 times the
// post bound leaves them room.
const DefaultMaxUnpackedBytes = 8 * DefaultMaxFilesBytes

// DefaultMaxFilesEntries bounds the entries of one post: empty files and
// folders escape the size bounds, and rank 0's collection merges every
// name of a job's posts in memory. A post holds the files the workers
// wrote since the node's last one (one mini-batch's, most often).
const DefaultMaxFilesEntries = 100_000

// Config builds a Service.
type Config struct {
	// Store keeps the ledgers.
	Store store.Store
	// Files keeps the posted file sets as artifacts of the job's
	// workspace.
	Files store.Files
	// Key derives and checks the ledger tokens (the server's secrets
	// key); nil: no token is valid.
	Key *sealing.Key
	// LeaseGrace is DefaultLeaseGrace when 0.
	LeaseGrace time.Duration
	// MaxFilesBytes is DefaultMaxFilesBytes when 0.
	MaxFilesBytes int64
	// MaxUnpackedBytes is DefaultMaxUnpackedBytes when 0.
	MaxUnpackedBytes int64
	// MaxFilesEntries is DefaultMaxFilesEntries when 0.
	MaxFilesEntries int
}

// Service keeps parallel jobs' ledgers.
type Service struct {
	store    store.Store
	files    store.Files
	key      *sealing.Key
	grace    time.Duration
	maxFiles int64
	unpacked int64
	entries  int
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, files: cfg.Files, key: cfg.Key, grace: cfg.LeaseGrace, maxFiles: cfg.MaxFilesBytes, unpacked: cfg.MaxUnpackedBytes, entries: cfg.MaxFilesEntries}
	if s.grace <= 0 {
		s.grace = DefaultLeaseGrace
	}
	if s.maxFiles <= 0 {
		s.maxFiles = DefaultMaxFilesBytes
	}
	if s.unpacked <= 0 {
		s.unpacked = DefaultMaxUnpackedBytes
	}
	if s.entries <= 0 {
		s.entries = DefaultMaxFilesEntries
	}
	return s
}

// tokenPrefix starts every ledger token, as service/tracking's do.
const tokenPrefix = "shoalpar_"

// macPurpose separates ledger tokens from any other MAC of the key.
const macPurpose = "parallel-ledger-token"

// Token returns the ledger token of an attempt: its ID and a MAC of it
// under the server's secrets key. Nothing is stored: every replica with
// the key derives and checks the same token, and the attempt's end (read
// from the store) is what revokes it.
func Token(key *sealing.Key, attemptID string) string {
	return tokenPrefix + attemptID + "_" + hex.EncodeToString(key.MAC(macPurpose, []byte(attemptID)))
}

// Caller is a rank of a parallel job's current attempt, authenticated by
// its ledger token.
type Caller struct {
	Workspace string
	Job       string
	AttemptID string
	Spec      job.ParallelSpec
	// Outputs are the job's output names: the first folder of every
	// posted file's path.
	Outputs map[string]bool
	// Ranks is the attempt's rank count; Ended are its ranks that ended
	// (a node lost while its process still runs is one).
	Ranks int
	Ended map[int]string
}

// checkRank refuses a rank the attempt does not have, or one that ended:
// its leases were given to the others.
func (c *Caller) checkRank(rank int) error {
	if rank < 0 || rank >= c.Ranks {
		return core.FieldErrorf("rank", "attempt has ranks 0 to %d, not %d", c.Ranks-1, rank)
	}
	if st, ok := c.Ended[rank]; ok {
		return core.Errorf(core.ECONFLICT, "rank %d of job %s has ended (%s): its mini-batches went to the other ranks", rank, c.Job, st)
	}
	return nil
}

// Authenticate checks the token a rank sent to attemptID's ledger routes:
// EUNAUTHORIZED unless it is this server's token of that very attempt and
// the attempt is its parallel job's current one and has not ended.
func (s *Service) Authenticate(ctx context.Context, attemptID, token string) (*Caller, error) {
	bad := core.Errorf(core.EUNAUTHORIZED, "the parallel ledger token is not valid for this attempt (the server gives it to a parallel job's attempt)")
	if s.key == nil || attemptID == "" || !strings.HasPrefix(token, tokenPrefix) ||
		!hmac.Equal([]byte(token), []byte(Token(s.key, attemptID))) {
		return nil, bad
	}
	var c *Caller
	err := s.store.View(ctx, func(tx store.Tx) error {
		a, j, err := agentapi.AttemptWithJob(tx, attemptID)
		switch {
		case core.ErrorCode(err) == core.ENOTFOUND:
			return bad
		case err != nil:
			return err
		case j.Parallel == nil:
			return bad
		case job.AttemptTerminal(a.Status) || j.CurrentAttemptID != a.ID:
			return core.Errorf(core.EUNAUTHORIZED, "attempt %d of job %s has ended: its parallel ledger token is no longer valid", a.Number, j.Name)
		}
		c = &Caller{Workspace: j.Workspace, Job: j.Name, AttemptID: a.ID, Spec: *j.Parallel, Outputs: map[string]bool{},
			Ranks: len(a.Ranks), Ended: map[int]string{}}
		for _, r := range a.Ranks {
			if job.AttemptTerminal(r.Status) {
				c.Ended[r.Rank] = r.Status
			}
		}
		for name := range j.Outputs {
			c.Outputs[name] = true
		}
		return nil
	})
	return c, err
}

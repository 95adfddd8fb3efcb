package storage

import (
	"bytes"
	"io"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// WriteCappedLog writes data at offset of a log within the workspace's
// log cap (limits.LogCap, a fixed offset: the cap marker goes there)
// and its storage quota, which logs count towards like artifacts and
// outputs: many jobs × ranks × attempts would otherwise fill the disk,
// each log within its cap. A write past the quota keeps the bytes that
// fit and ends the log with LogQuotaMarker; it is no error, so the job
// runs on (an agent's log uploads never fail a job), and while that
// marker ends the log later chunks are dropped. The marker's own bytes
// pass the quota, once per log.
func (s *Service) WriteCappedLog(l money.WorkspaceLimits, f store.LogFile, offset int64, data []byte) error {
	limit := l.LogCap()
	keep, cut := capLogWrite(limit, offset, data)
	if len(keep) > 0 {
		quota := l.StorageQuota()
		g, _, err := s.reserve(f.Workspace, quota, int64(len(keep)))
		if err != nil {
			return err
		}
		defer s.release(f.Workspace, g)
		if g < int64(len(keep)) {
			return s.cutLogAtQuota(f, quota, offset, keep[:g])
		}
		if err := f.Write(offset, keep); err != nil {
			return err
		}
	}
	if cut {
		marker := money.LogQuotaMarker(l.StorageQuota())
		if end, tail, err := logTail(f, len(marker)); err != nil {
			return err
		} else if end > 0 && tail == marker {
			return nil // cut at the quota before it reached its cap
		}
		return f.Write(limit, []byte(money.LogCutMarker(limit)))
	}
	return nil
}

// cutLogAtQuota stores what the quota granted of a write (fit) and ends
// the log with the quota's marker, unless the marker ends it already (a
// retry, a later chunk). The marker goes after every byte stored, so a
// retried chunk the log already holds is not overwritten by it.
func (s *Service) cutLogAtQuota(f store.LogFile, quota, offset int64, fit []byte) error {
	marker := money.LogQuotaMarker(quota)
	end, tail, err := logTail(f, len(marker))
	if err != nil {
		return err
	}
	if end > 0 && tail == marker {
		return nil
	}
	if len(fit) > 0 {
		if err := f.Write(offset, fit); err != nil {
			return err
		}
	}
	return f.Write(max(end, offset+int64(len(fit))), []byte(marker))
}

// logTail returns a log's size and its last n bytes (fewer when
// shorter); a log not yet written is empty.
func logTail(f store.LogFile, n int) (int64, string, error) {
	r, err := f.Open()
	if core.ErrorCode(err) == core.ENOTFOUND {
		return 0, "", nil
	} else if err != nil {
		return 0, "", err
	}
	defer r.Close()
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, "", err
	}
	if _, err := r.Seek(max(0, end-int64(n)), io.SeekStart); err != nil {
		return 0, "", err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(r, int64(n))); err != nil {
		return 0, "", err
	}
	return end, b.String(), nil
}

// capLogWrite bounds a write at offset of a rank's log to limit bytes:
// what lies past it is dropped, and the cut is marked once, at limit
// itself (the same bytes the node's agent writes there), so retried or
// late chunks leave the stored log the same.
func capLogWrite(limit, offset int64, data []byte) (keep []byte, marker bool) {
	if offset+int64(len(data)) <= limit {
		return data, false
	}
	if offset >= limit {
		return nil, true
	}
	return data[:limit-offset], true
}

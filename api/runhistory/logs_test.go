package runhistory

import (
	"net/url"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/sealing"
)

// TestLogFileNames: a rank's log is named as Azure names it, and only
// those names map back to a rank (one name per rank: no leading zero,
// no sign, no other folder).
func TestLogFileNames(t *testing.T) {
	for _, c := range []struct {
		rank, ranks int
		want        string
	}{{0, 1, "user_logs/std_log.txt"}, {0, 2, "user_logs/std_log_process_0.txt"}, {11, 12, "user_logs/std_log_process_11.txt"}} {
		got := LogFileName(c.rank, c.ranks)
		if got != c.want {
			t.Errorf("LogFileName(%d, %d) = %q, want %q", c.rank, c.ranks, got, c.want)
		}
		if r, ok := rankOf(got); !ok || r != c.rank {
			t.Errorf("rankOf(%q) = %d, %v", got, r, ok)
		}
	}
	for _, bad := range []string{"", "std_log.txt", "user_logs/std_log_process_.txt", "user_logs/std_log_process_01.txt",
		"user_logs/std_log_process_-1.txt", "user_logs/std_log_process_+1.txt", "user_logs/std_log_process_1.txt/../x",
		"user_logs/../user_logs/std_log.txt", "user_logs/std_log_process_1234567.txt", "user_logs/std_log_process_1.log",
		"azureml-logs/70_driver_log.txt"} {
		if r, ok := rankOf(bad); ok {
			t.Errorf("rankOf(%q) = %d, want no rank", bad, r)
		}
	}
}

// TestLogSignature: a signature holds for its workspace (in any case),
// job, file and expiry, and for no other; no two tuples sign the same
// bytes however their fields are split.
func TestLogSignature(t *testing.T) {
	key, err := sealing.New(make([]byte, sealing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	h := New(Config{Key: key, Clock: fixedClock{now}, PublicURL: func() string { return "https://shoal.lab/" }})
	exp := now.Add(time.Minute)
	created := now.Add(-time.Hour)
	q, _ := url.ParseQuery(SignLog(key, "Vision", "train", created, "user_logs/std_log.txt", exp))
	if err := h.checkSignature(q, "vision", "train", created, "user_logs/std_log.txt"); err != nil {
		t.Fatalf("its own signature: %v", err)
	}
	for _, other := range [][3]string{
		{"visio", "ntrain", "user_logs/std_log.txt"},
		{"vision", "train2", "user_logs/std_log.txt"},
		{"vision", "train", "user_logs/std_log_process_0.txt"},
		{"research", "train", "user_logs/std_log.txt"},
	} {
		if err := h.checkSignature(q, other[0], other[1], created, other[2]); err == nil {
			t.Errorf("train's signature holds for %v", other)
		}
	}
	// A job of the name created since (its workspace deleted and created
	// again) is another job.
	if err := h.checkSignature(q, "vision", "train", created.Add(time.Microsecond), "user_logs/std_log.txt"); err == nil {
		t.Error("train's signature holds for another job named train")
	}
	later := url.Values{"se": {"9999999999"}, "sig": q["sig"]}
	if err := h.checkSignature(later, "vision", "train", created, "user_logs/std_log.txt"); err == nil {
		t.Error("the signature holds for a later expiry")
	}
	expired := New(Config{Key: key, Clock: fixedClock{exp}, PublicURL: func() string { return "" }})
	if err := expired.checkSignature(q, "vision", "train", created, "user_logs/std_log.txt"); err == nil {
		t.Error("the signature holds at its expiry")
	}
	if a, b := signedMessage("ab", "c", created, "f", "1"), signedMessage("a", "bc", created, "f", "1"); string(a) == string(b) {
		t.Errorf("two tuples sign the same bytes: %q", a)
	}
	if got := h.SignedLogURL(&job.Job{JobSpec: job.JobSpec{Name: "train"}, Workspace: "Vision", CreatedOn: created}, "user_logs/std_log.txt", exp); got[:len("https://shoal.lab/history/v1.0/logs/vision/train/user_logs/std_log.txt?")] != "https://shoal.lab/history/v1.0/logs/vision/train/user_logs/std_log.txt?" {
		t.Errorf("SignedLogURL = %q", got)
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

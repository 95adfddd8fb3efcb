package job_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// mini_batch_size: files for a folder, bytes for a table (a bare number
// too, as Azure's SDK sends sizes), defaults, and refusals naming the key.
func TestParseMiniBatchSize(t *testing.T) {
	for _, c := range []struct {
		in    string
		table bool
		want  job.MiniBatch
	}{
		{"", false, job.MiniBatch{Files: 10}},
		{"", true, job.MiniBatch{Bytes: 1 << 20}},
		{"5", false, job.MiniBatch{Files: 5}},
		{"10kb", false, job.MiniBatch{Bytes: 10 << 10}},
		{"10240", true, job.MiniBatch{Bytes: 10240}},
		{" 2MB ", true, job.MiniBatch{Bytes: 2 << 20}},
		{"1gb", true, job.MiniBatch{Bytes: 1 << 30}},
	} {
		got, err := job.ParseMiniBatchSize(c.in, c.table)
		if err != nil || got != c.want {
			t.Errorf("ParseMiniBatchSize(%q, %v) = %+v, %v; want %+v", c.in, c.table, got, err, c.want)
		}
	}
	for _, bad := range []string{"0", "-3", "ten", "10tb", "1.5mb", "2000000", "kb"} {
		if _, err := job.ParseMiniBatchSize(bad, false); err == nil {
			t.Errorf("ParseMiniBatchSize(%q) passed", bad)
		}
	}
}

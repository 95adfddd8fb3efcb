package sim

import (
	"encoding/csv"
	"io"
	"strconv"
)

// WriteWaits writes the wait of every job (submit to start, in seconds)
// as CSV: a row per job in trace order with its submission time, and a
// column per replay named by its policy. The replays must be of the same
// jobs. It is what `shoal sim --waits FILE` writes, and the per-job part
// of the golden replay.
func WriteWaits(w io.Writer, jobs []Job, results []*Result) error {
	cw := csv.NewWriter(w)
	head := []string{"job", "submit_s"}
	for _, r := range results {
		head = append(head, r.Policy)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, len(head))
	for i, j := range jobs {
		row[0], row[1] = j.ID, strconv.FormatFloat(j.Submit.Seconds(), 'g', -1, 64)
		for k, r := range results {
			row[2+k] = strconv.FormatFloat(r.Waits[i].Wait.Seconds(), 'g', -1, 64)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

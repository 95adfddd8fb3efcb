package cmdutil

import (
	"bytes"
)

// ListStream prints the successive batches of a list that a command
// watches (`job list --watch`, `compute events --follow`). In table output
// the header comes once, with the first rows, and each batch after adds
// only rows, so a watched table reads as one table; an empty first batch
// is the line "(none)". Other formats print each batch as Render does.
type ListStream struct {
	g       *Globals
	columns []string
	// minWidths are widths, by key, that the first rows may not show but
	// later ones need (a status that becomes CancelRequested), so that
	// rows stay under their header.
	minWidths map[string]int
	said      bool // noneLine printed for an empty first batch
	keys      []string
	layout    *tableLayout
}

// Stream returns a ListStream whose table shows columns, each at least
// as wide as minWidths says.
func (g *Globals) Stream(columns []string, minWidths map[string]int) *ListStream {
	return &ListStream{g: g, columns: columns, minWidths: minWidths}
}

// Write prints one batch.
func (s *ListStream) Write(v any) error {
	if s.g.Output != "table" {
		return s.g.Render(v, s.columns)
	}
	columns := s.columns
	if s.g.Query != "" {
		columns = nil
	}
	val, err := prepare(v, s.g.Query)
	if err != nil || val == nil {
		return err
	}
	var b bytes.Buffer
	if isScalar(val) {
		b.WriteString(EscapeControls(formatScalar(val), false) + "\n")
		_, err := s.g.Stdout.Write(b.Bytes())
		return err
	}
	keys, records := cellRecords(val, true)
	if s.layout == nil {
		if len(records) == 0 || len(keys) == 0 {
			if !s.said {
				s.said = true
				b.WriteString(noneLine + "\n")
			}
			_, err := s.g.Stdout.Write(b.Bytes())
			return err
		}
		// The command's columns, whether or not this first batch has
		// them all: a later row may fill one that an omitted empty
		// value left out here.
		s.keys = columns
		if len(s.keys) == 0 {
			s.keys = keys
		}
	}
	rows := rowsOf(records, s.keys)
	tableTimes(rows)
	if s.layout == nil {
		s.layout = newTableLayout(s.keys, rows)
		for i, k := range s.keys {
			s.layout.widths[i] = max(s.layout.widths[i], s.minWidths[k])
		}
		s.layout.writeHeader(&b)
	}
	for _, row := range rows {
		s.layout.writeRow(&b, row)
	}
	_, err = s.g.Stdout.Write(b.Bytes())
	return err
}

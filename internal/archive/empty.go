package archive

import "io"

// Empty writes an archive with nothing in it: an output folder a job
// declared and left empty, which the next step of a pipeline gets as an
// empty folder.
func Empty(w io.Writer) error {
	gz, tw := newWriters(w)
	return closeWriters(gz, tw)
}

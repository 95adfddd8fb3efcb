// Package failpoint injects store errors into the SQL stores'
// transactions in the chaos suite's binary (the failpoint build tag); in
// any other build it never fires.
package failpoint

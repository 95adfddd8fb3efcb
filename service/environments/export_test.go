package environments

// SetMaxBuildContextBytes lowers the build context limit for a test and
// returns what restores it.
func SetMaxBuildContextBytes(n int64) (restore func()) {
	old := maxBuildContextBytes
	maxBuildContextBytes = n
	return func() { maxBuildContextBytes = old }
}

package web

// SetWriteChunk sets how much a write may send between re-arms of the write
// deadline, and returns a function that restores it. Not for parallel tests.
func SetWriteChunk(n int) (restore func()) {
	old := writeChunk
	writeChunk = n
	return func() { writeChunk = old }
}

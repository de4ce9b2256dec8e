package web

// SetWriteChunk sets how much a write may send between re-arms of the write
// deadline, and returns a function that restores it. It holds for the Apps that start serving until then.
func SetWriteChunk(n int) (restore func()) {
	old := writeChunk.Swap(int64(n))
	return func() { writeChunk.Store(old) }
}

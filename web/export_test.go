package web

// SetWriteChunk sets how much a write may send between re-arms of the write
// deadline, and returns a function that restores it. It holds for the Apps that start serving until then.
func SetWriteChunk(n int) (restore func()) {
	old := writeChunk.Swap(int64(n))
	return func() { writeChunk.Store(old) }
}

// FramingNotes feeds stream to the framing scan of a connection of Serve's
// in pieces cut at splits (offsets into stream, in order), then takes its
// notes: for each header section, in order, "-" (neither field), "length",
// "coding" or "both"; then "lost" if the scan stopped following.
func FramingNotes(stream []byte, splits ...int) []string {
	var s framingScan
	from := 0
	for _, to := range append(splits, len(stream)) {
		s.read(stream[from:to])
		from = to
	}
	var got []string
	for {
		n, ok := s.take()
		if !ok {
			break
		}
		got = append(got, [...]string{"-", "length", "coding", "both"}[n])
	}
	if s.state == lost {
		got = append(got, "lost")
	}
	return got
}

package nbio

import "testing"

// TestValidFieldValue wants the eight-bytes-at-a-time check to say what
// the byte-by-byte one says, at every position of a long value.
func TestValidFieldValue(t *testing.T) {
	base := []byte("text/html,application/xhtml+xml;q=0.9 \xe9\xff")
	for pos := range len(base) {
		for _, c := range []byte{0, 1, '\t', '\n', '\r', 0x1f, ' ', '~', 0x7f, 0x80, 0xff} {
			v := append([]byte(nil), base...)
			v[pos] = c
			if got, want := validFieldValue(string(v)), validFieldBytes(string(v)); got != want {
				t.Errorf("%q: got %v; want %v", v, got, want)
			}
		}
	}
}

// FuzzValidFieldValue: the same for any value.
func FuzzValidFieldValue(f *testing.F) {
	f.Add("text/html\x00, x")
	f.Add("a\x7fbcdefghij")
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := validFieldValue(v), validFieldBytes(v); got != want {
			t.Fatalf("%q: got %v; want %v", v, got, want)
		}
	})
}

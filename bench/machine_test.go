package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFirstField reads the first line whose key matches, with the
// separator, from a file laid out as /proc/cpuinfo is.
func TestFirstField(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpuinfo")
	text := "processor\t: 0\nmodel name\nmodel name\t: AMD EPYC\nmodel name\t: second\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{
		{"model name", "AMD EPYC"}, // not the line without a separator, nor the last
		{"processor", "0"},
		{"model", ""},
	} {
		if got := firstField(file, tc.key, ':'); got != tc.want {
			t.Errorf("firstField(%q) = %q; want %q", tc.key, got, tc.want)
		}
	}
	if got := firstField(filepath.Join(t.TempDir(), "none"), "model name", ':'); got != "" {
		t.Errorf("firstField of a missing file = %q; want empty", got)
	}
}

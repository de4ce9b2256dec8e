package load

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestWriteTextGolden(t *testing.T) {
	var lat []time.Duration
	for i := range 1000 {
		lat = append(lat, time.Duration(1000+i*7)*time.Microsecond)
	}
	closed := resultOf(t, lat)
	closed.Targets = []string{"GET http://127.0.0.1:8080/"}
	closed.Connections = 64
	closed.Elapsed = 10 * time.Second
	closed.Sent = 1010
	closed.Bytes = 123456
	closed.Connects, closed.Reconnects = 70, 6
	closed.Errors = Errors{Status: 5, Timeout: 2, Closed: 1}
	closed.Status = map[int]int64{200: 1000, 503: 5}
	closed.countNon2xx()
	closed.Limits = []string{"10000 connections asked for but the file descriptor limit is 1024"}
	closed.computeRate()

	open := resultOf(t, lat)
	open.Mode, open.Rate = Open, 100
	open.Targets = []string{"GET http://127.0.0.1:8080/todos", "POST http://127.0.0.1:8080/todos"}
	open.Connections = 12
	open.Elapsed = 10 * time.Second
	open.Scheduled, open.Late = 1000, 3
	open.computeRate()

	empty := &Result{Mode: Closed, Connections: 2, Targets: []string{"GET http://127.0.0.1:1/"}, Errors: Errors{Refused: 3}}

	for name, r := range map[string]*Result{"closed": closed, "open": open, "empty": empty} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "text-"+name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("text report:\n%s\nwant:\n%s", buf.Bytes(), want)
			}
		})
	}
}

// TestFormatBytes takes each unit at its edge, and a count past the
// largest unit, which stays in it.
func TestFormatBytes(t *testing.T) {
	const tb = 1 << 40
	for _, tc := range []struct {
		n    float64
		want string
	}{
		{0, "0.00B"},
		{1023, "1023.00B"},
		{1024, "1.00KB"},
		{1 << 20, "1.00MB"},
		{1 << 30, "1.00GB"},
		{tb, "1.00TB"},
		{1024 * tb, "1024.00TB"},
		{1 << 60, "1048576.00TB"},
	} {
		if got := formatBytes(tc.n); got != tc.want {
			t.Errorf("formatBytes(%g) = %q; want %q", tc.n, got, tc.want)
		}
	}
}

package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrVersion is returned by ReadJSON for a results file of another format.
var ErrVersion = errors.New("unsupported results version")

// WriteJSON writes r as indented JSON: results.json.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report written by WriteJSON, of this version or of
// version 1 (before rounds), whose runs read as one round each: they keep
// their verdicts, and compare with others as runs of one round, which no
// test can call different.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("decode results: %w", err)
	}
	if r.Version != ReportVersion && r.Version != 1 {
		return nil, fmt.Errorf("%w: %d (this loom reads 1 and %d)", ErrVersion, r.Version, ReportVersion)
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for j := range sc.Runs {
			run := &sc.Runs[j]
			if run.Rate == 0 {
				run.Rate = sc.Unit.of(run.Throughput) // written before runs had a Rate
			}
			if run.ThroughputSpread.Rounds == 0 {
				run.summariseSpreads() // version 1: one round, its own figures
			}
		}
	}
	if r.Version == 1 {
		r.Rounds, r.Version = 1, ReportVersion
	}
	return &r, nil
}

// ReadJSONFile reads the results.json at path.
func ReadJSONFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

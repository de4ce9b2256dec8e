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

// ReadJSON reads a report written by WriteJSON.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("decode results: %w", err)
	}
	if r.Version != ReportVersion {
		return nil, fmt.Errorf("%w: %d (want %d)", ErrVersion, r.Version, ReportVersion)
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for j := range sc.Runs {
			if run := &sc.Runs[j]; run.Rate == 0 {
				run.Rate = sc.Unit.of(run.Throughput) // written before runs had a Rate
			}
		}
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

package load

import (
	"encoding/json"
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// UnmarshalJSON decodes a Result written by encoding/json, including its
// histogram, so that Percentile and Merge work on it.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result // no methods: avoids recursing into UnmarshalJSON
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Result(p)
	r.hist = nil
	if r.Histogram == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(r.Histogram))
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	r.hist = h
	return nil
}

package bench

import (
	"math"
	"testing"
)

// TestCallable: the two-sided U test's smallest p is 2 ÷ C(n1+n2, n1), so
// three rounds a model can never reach 0.05 (p ≥ 0.1) and four can
// (0.029); uneven sizes count too.
func TestCallable(t *testing.T) {
	for _, tt := range []struct {
		n1, n2 int
		want   bool
	}{
		{0, 5, false}, {1, 1, false}, {2, 2, false}, {3, 3, false}, {4, 4, true}, {5, 5, true},
		{3, 4, false}, // 2 ÷ 35 = 0.057
		{2, 20, true}, // 2 ÷ 231
		{1, 30, false}, {1, 40, true},
	} {
		if got := callable(tt.n1, tt.n2); got != tt.want {
			t.Errorf("callable(%d, %d) = %t; want %t", tt.n1, tt.n2, got, tt.want)
		}
	}
	if got := MinRounds(); got != 4 {
		t.Errorf("MinRounds() = %d; want 4", got)
	}
}

// TestCompareRounds feeds the test synthetic rounds: the same
// distribution twice ties, a shift of 20% is significant, a model whose
// rounds scatter over 90% beside a steady one is noise, and three rounds
// call nothing however far apart.
func TestCompareRounds(t *testing.T) {
	steady := []float64{1000, 1010, 990, 1005, 995}
	for _, tt := range []struct {
		name string
		a, b []float64
		want Difference
	}{
		{"equal", steady, []float64{1002, 992, 1008, 998, 1000}, Same},
		{"shifted", steady, []float64{1200, 1210, 1190, 1205, 1195}, Significant},
		{"shifted down", steady, []float64{800, 810, 790, 805, 795}, Significant},
		{"one noisy", steady, []float64{600, 1500, 900, 1300, 1100}, Noisy},
		// NoiseLimit at its edge: a range of exactly 10% of the median is
		// steady, 10.4% is noise.
		{"noise at the limit", []float64{950, 975, 1000, 1025, 1050}, []float64{960, 990, 1000, 1010, 1040}, Same},
		{"noise past the limit", []float64{949, 975, 1000, 1025, 1053}, []float64{960, 990, 1000, 1010, 1040}, Noisy},
		{"identical", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, Same},
		{"three rounds", []float64{1, 2, 3}, []float64{100, 200, 300}, Uncalled},
	} {
		c := compareRounds(tt.a, tt.b)
		if c.Difference != tt.want {
			t.Errorf("%s: compareRounds = %+v; want difference %d", tt.name, c, tt.want)
		}
	}
	if c := compareRounds(steady, []float64{1200, 1210, 1190, 1205, 1195}); c.P > 0.01 {
		t.Errorf("five rounds each, all apart: p = %v; want 2 ÷ 252 ≈ 0.008", c.P)
	}
}

// TestSpread: the median as benchstat gives it, the extremes, and the
// range over the median.
func TestSpread(t *testing.T) {
	values := []float64{30, 10, 20, 50, 40}
	s := spreadOf(values)
	if s.Median != 30 || s.Min != 10 || s.Max != 50 || s.Rounds != 5 {
		t.Errorf("spreadOf(%v) = %+v; want median 30, 10–50, 5 rounds", values, s)
	}
	if values[0] != 30 {
		t.Errorf("spreadOf sorted its argument: %v", values)
	}
	if got := s.Relative(); got < 1.33 || got > 1.34 {
		t.Errorf("Relative = %v; want 40 ÷ 30", got)
	}
	if (Spread{}).Relative() != 0 || spreadOf(nil) != (Spread{}) {
		t.Error("an empty spread has no relative range")
	}
}

// TestFmtSpreadPercent: a relative spread rounds to a whole percent; one
// that is no number (a median of 0 divided into) shows as "?".
func TestFmtSpreadPercent(t *testing.T) {
	for _, tt := range []struct {
		r    float64
		want string
	}{
		{0, "0%"}, {0.354, "35%"}, {1.5, "150%"},
		{math.Inf(1), "?"}, {math.Inf(-1), "?"}, {math.NaN(), "?"},
	} {
		if got := fmtSpreadPercent(tt.r); got != tt.want {
			t.Errorf("fmtSpreadPercent(%v) = %q; want %q", tt.r, got, tt.want)
		}
	}
}

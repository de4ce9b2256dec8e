package bench

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Alpha is the significance level of every verdict and comparison: two
// models differ only when the Mann-Whitney U test over their rounds gives
// p ≤ Alpha, benchstat's rule and default.
const Alpha = 0.05

// NoiseLimit is the spread above which a model's rounds are too scattered
// for a difference that is not significant to count as a tie: a model
// whose rounds range over more than 10% of its median, beside one it does
// not differ from significantly, makes the pair too noisy to rank.
const NoiseLimit = 0.10

// LimitTie is how close to a scenario's known limit a model must come for
// the limit, not the model, to bound it: models at or above 98% of the
// limit tie with each other whatever the test says.
const LimitTie = 0.98

// Spread summarises one figure over a model's rounds: the median, as
// benchstat reports it, and the lowest and highest round.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Rounds is how many rounds the figure summarises.
	Rounds int `json:"rounds"`
}

// spreadOf summarises values (not modified); the zero Spread for none.
func spreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, 0.95)
	return Spread{Median: sum.Center, Min: s.Values[0], Max: s.Values[len(s.Values)-1], Rounds: len(values)}
}

// Relative is the spread's range over its median: 0.12 when the rounds lie
// within 12% of the median's size of each other; 0 without a median.
func (s Spread) Relative() float64 {
	if s.Median <= 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median
}

// Difference is what a comparison of two samples found.
type Difference int

const (
	// Uncalled: too few rounds for any difference to reach Alpha.
	Uncalled Difference = iota
	// Same: no significant difference, and rounds steady enough (within
	// NoiseLimit) that the two tie.
	Same
	// Noisy: no significant difference, but a model's rounds spread over
	// more than NoiseLimit: the machine was too noisy to tell.
	Noisy
	// AtLimit: both reach LimitTie of a known limit, which bounds them alike.
	AtLimit
	// Significant: the Mann-Whitney U test gives p ≤ Alpha.
	Significant
)

// Comparison is the test of one sample against another.
type Comparison struct {
	Difference Difference
	// P is the test's p-value; 1 when it could not be computed.
	P float64
	// Noise is the larger relative spread of the two samples.
	Noise float64
}

// compareRounds tests whether a and b, the rounds of two models, come
// from the same distribution, as benchstat does (Mann-Whitney U, p ≤
// Alpha), and says what a difference that is not significant means: a
// tie when both are steady, noise when either spreads over NoiseLimit,
// nothing when the rounds are too few for any p to reach Alpha.
func compareRounds(a, b []float64) Comparison {
	noise := max(spreadOf(a).Relative(), spreadOf(b).Relative())
	if !callable(len(a), len(b)) {
		return Comparison{Difference: Uncalled, P: 1, Noise: noise}
	}
	sa := benchmath.NewSample(slices.Clone(a), &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(slices.Clone(b), &benchmath.DefaultThresholds)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	switch {
	case c.P <= c.Alpha:
		return Comparison{Difference: Significant, P: c.P, Noise: noise}
	case noise > NoiseLimit:
		return Comparison{Difference: Noisy, P: c.P, Noise: noise}
	}
	return Comparison{Difference: Same, P: c.P, Noise: noise}
}

// callable reports whether samples of n1 and n2 rounds can differ
// significantly at all: the smallest p the two-sided U test gives, when
// every round of one lies above every round of the other, is
// 2 ÷ C(n1+n2, n1). Four rounds each are the fewest that reach 0.05.
func callable(n1, n2 int) bool {
	if n1 < 1 || n2 < 1 {
		return false
	}
	// C(n1+n2, n1) in floating point: exact enough for the sizes of rounds.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return 2/c <= Alpha
}

// MinRounds is the fewest rounds a model at which the U test can call any
// difference at Alpha: 4.
func MinRounds() int {
	n := 1
	for !callable(n, n) {
		n++
	}
	return n
}

// fmtP formats a p-value: "p = 0.008", "p < 0.001".
func fmtP(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return fmt.Sprintf("p = %.3f", p)
}

// fmtSpreadPercent formats a relative spread: 0.354 → "35%".
func fmtSpreadPercent(r float64) string {
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*r)
}

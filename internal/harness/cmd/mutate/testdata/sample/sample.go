// Package sample is what mutate's test plants mutants in: each function
// has a mutant its test kills and, where marked, one it lets live.
package sample

// DefaultLimit is the largest n that Accept takes.
const DefaultLimit = 10

// maxShift is the largest shift; doubled, it overflows its type.
const maxShift uint8 = 200

// Accept reports whether n is in 1..DefaultLimit and name is set. The test
// never passes an empty name, so dropping name != "" lives.
func Accept(n int, name string) bool {
	return n > 0 && n <= DefaultLimit && name != ""
}

// Either is a || b; the test never has b alone true, so dropping b lives.
func Either(a, b bool) bool {
	return a || b
}

// Size is c, or 4 when c is zero.
func Size(c int) int {
	if c == 0 {
		c = 4
	}
	return c
}

// Count counts from 0 to n, stopping early at stop. Without the i != n
// term, a stop below zero is never reached: the mutant hangs.
func Count(n, stop int) int {
	i := 0
	for i != n && i != stop {
		i++
	}
	return i
}

// Shift shifts by s, at most maxShift.
func Shift(s uint8) uint8 {
	return min(s, maxShift)
}

// unused is reached by no test: its mutants are not covered.
func unused(x int) bool {
	return x > 1 && x < 5
}

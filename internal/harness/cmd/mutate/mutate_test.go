package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestFindListsEachTermAndBound checks the mutants find lists, by the
// rules in its doc comment.
func TestFindListsEachTermAndBound(t *testing.T) {
	p, err := load("testdata/sample", map[Operator]bool{DropTerm: true, WidenConst: true, WidenDefault: true, SkipDefault: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.mutants {
		got = append(got, string(m.Op)+" "+m.Mutated)
	}
	want := []string{
		"widen-const DefaultLimit = (10) * 2",
		"widen-const maxShift = (200) * 2",
		`drop-term true && n <= DefaultLimit && name != ""`,
		`drop-term n > 0 && true && name != ""`,
		`drop-term n > 0 && n <= DefaultLimit && true`,
		"drop-term false || b",
		"drop-term a || false",
		"skip-default if false { c = 4 }",
		"widen-default c = (4) * 2",
		"drop-term true && i != stop",
		"drop-term i != n && true",
		"drop-term true && x < 5",
		"drop-term x > 1 && true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, m := range p.mutants {
		if m.ID != i+1 {
			t.Errorf("mutant %d numbered %d", i+1, m.ID)
		}
	}
}

// TestRunTellsEachOutcome runs the sample's tests against each mutant and
// wants every outcome where the sample's comments put it.
func TestRunTellsEachOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sample's tests three times")
	}
	t.Setenv("GOWORK", "off") // the sample is a module of its own
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-timeout", "20s", "testdata/sample"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]Status{
		"DefaultLimit = (10) * 2":                 Killed,
		"maxShift = (200) * 2":                    Unbuildable,
		`true && n <= DefaultLimit && name != ""`: Killed,
		`n > 0 && true && name != ""`:             Killed,
		`n > 0 && n <= DefaultLimit && true`:      Lived,
		"false || b":                              Killed,
		"a || false":                              Lived,
		"if false { c = 4 }":                      Killed,
		"c = (4) * 2":                             Killed,
		"true && i != stop":                       TimedOut,
		"i != n && true":                          Lived,
		"true && x < 5":                           NotCovered,
		"x > 1 && true":                           NotCovered,
	}
	line := regexp.MustCompile(`^(KILLED|LIVED|TIMED OUT|NOT COVERED|UNBUILDABLE) +\d+ +\S+ +\S+  .*  →  (.*?)( \(\d[^()]*\))?$`)
	seen := 0
	for _, l := range strings.Split(out.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		if w, ok := want[m[2]]; !ok || Status(m[1]) != w {
			t.Errorf("%s: got %s, want %q", m[2], m[1], w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d mutants reported, want %d:\n%s", seen, len(want), out.String())
	}
	for _, s := range []string{
		"drop-term: killed 3, lived 3, timed out 1, not covered 2, unbuildable 0; efficacy 50.0%",
		"widen-const: killed 1, lived 0, timed out 0, not covered 0, unbuildable 1; efficacy 100.0%",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in\n%s", s, out.String())
		}
	}
}

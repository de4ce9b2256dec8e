package load

import (
	"errors"
	"testing"
)

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		in       string
		accepted []int
		rejected []int
	}{
		{"200", []int{200}, []int{201, 404, 0}},
		{"2xx", []int{200, 204, 299}, []int{199, 300}},
		{"200,201", []int{200, 201}, []int{202}},
		{" 200 , 4XX ", []int{200, 404, 499}, []int{201, 500}},
		{"200-204,500", []int{200, 202, 204, 500}, []int{205, 501}},
		// Every limit at its edge: the first and last class and code, a
		// range of one code, and codes just outside what the list holds.
		{"1xx", []int{100, 199}, []int{99, 200}},
		{"5xx", []int{500, 599}, []int{499, 600, -1}},
		{"100,599", []int{100, 599}, []int{101, 598, 600}},
		{"200-200", []int{200}, []int{199, 201}},
	} {
		ok, err := ParseStatus(tc.in)
		if err != nil {
			t.Errorf("ParseStatus(%q): %v", tc.in, err)
			continue
		}
		for _, c := range tc.accepted {
			if !ok(c) {
				t.Errorf("ParseStatus(%q)(%d) = false; want true", tc.in, c)
			}
		}
		for _, c := range tc.rejected {
			if ok(c) {
				t.Errorf("ParseStatus(%q)(%d) = true; want false", tc.in, c)
			}
		}
	}
	// "20x" and "2x0" are neither a code nor a class: a class needs both
	// its last characters to be x.
	for _, in := range []string{"", "20", "2000", "6xx", "0xx", "abc", "300-200", "200,", "200-", "099", "600", "0", "-1", "20x", "2x0", "2X0"} {
		if _, err := ParseStatus(in); !errors.Is(err, ErrBadStatus) {
			t.Errorf("ParseStatus(%q): %v; want ErrBadStatus", in, err)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"200", "2xx", "200,201", "200-299,404"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok, err := ParseStatus(s)
		if err != nil {
			if !errors.Is(err, ErrBadStatus) {
				t.Fatalf("error %v is not ErrBadStatus", err)
			}
			return
		}
		any := false
		for c := -1; c <= 700; c++ {
			if ok(c) {
				if c < 100 || c > 599 {
					t.Fatalf("%q accepts %d", s, c)
				}
				any = true
			}
		}
		if !any {
			t.Fatalf("%q parsed but accepts nothing", s)
		}
	})
}

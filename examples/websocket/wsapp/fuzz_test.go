package wsapp

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"ada", "ada", ""},
		{"  Ada Lovelace ", "Ada Lovelace", ""},
		{"", "", ""},
		{"Жанна ✓", "Жанна ✓", ""},
		{strings.Repeat("n", MaxNameLength), strings.Repeat("n", MaxNameLength), ""},
		{strings.Repeat("n", MaxNameLength+1), "", "bad name: 33 characters, want at most 32"},
		{"a\x00b", "", "bad name: character U+0000 is not printable"},
		{"a\u200bb", "", "bad name: character U+200B is not printable"},
		{"\xff", "", "bad name: not valid UTF-8"},
	}
	for _, tt := range tests {
		got, err := ParseName(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			if !errors.Is(err, ErrBadName) {
				t.Errorf("ParseName(%q): got error %v; want ErrBadName", tt.in, err)
			}
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParseName(%q): got %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"ada", " ada ", "", "Жанна", "a\x00b", "\xff", strings.Repeat("n", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := ParseName(s)
		if err != nil {
			if !errors.Is(err, ErrBadName) {
				t.Fatalf("ParseName(%q): got error %v; want ErrBadName", s, err)
			}
			return
		}
		if name != strings.TrimSpace(name) {
			t.Fatalf("ParseName(%q) = %q: not trimmed", s, name)
		}
		if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength {
			t.Fatalf("ParseName(%q) = %q: invalid or too long", s, name)
		}
		for _, r := range name {
			if !unicode.IsPrint(r) {
				t.Fatalf("ParseName(%q) = %q: holds unprintable %U", s, name, r)
			}
		}
	})
}

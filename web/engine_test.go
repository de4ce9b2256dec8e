package web

import (
	"errors"
	"strings"
	"testing"
)

// TestLookupEngine covers the names without nbio linked in (this package's
// tests do not import it): std is net/http (nil), nbio says what to import,
// anything else lists the known names.
func TestLookupEngine(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"", ""},
		{"std", ""},
		{"nbio", `import _ "github.com/loomrt/loom/web/nbio"`},
		{"tomcat", "want one of nbio, std"},
	}
	for _, tt := range tests {
		e, err := LookupEngine(tt.name)
		if tt.wantErr == "" {
			if e != nil || err != nil {
				t.Errorf("LookupEngine(%q) = %v, %v; want nil, nil (net/http)", tt.name, e, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("LookupEngine(%q): got %v; want an ErrEngine saying %s", tt.name, err, tt.wantErr)
		}
	}
}

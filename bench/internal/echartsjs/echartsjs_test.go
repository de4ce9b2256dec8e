package echartsjs

import (
	"strings"
	"testing"
)

func TestScriptIsECharts(t *testing.T) {
	if len(Script) < 500_000 {
		t.Fatalf("len(Script) = %d; want the full minified library", len(Script))
	}
	if !strings.Contains(Script, "echarts") || !strings.Contains(Script, Version) {
		t.Errorf("Script does not look like ECharts %s", Version)
	}
}

// Package echartsjs embeds Apache ECharts 5.6.0 (dist/echarts.min.js from
// the echarts npm package, Apache-2.0; see LICENSE, NOTICE and LICENSE-d3 in
// this directory) so that loom's HTML reports draw their charts with no
// network: the script is inlined into the page instead of loaded from a CDN.
//
//	fmt.Fprintf(w, "<script>%s</script>", echartsjs.Script)
package echartsjs

import _ "embed" // for go:embed

// Script is the minified ECharts library. It defines the global `echarts`.
//
//go:embed echarts.min.js
var Script string

// Version is the ECharts release Script holds.
const Version = "5.6.0"

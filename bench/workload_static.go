package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomrt/loom/web"
)

// staticMarker opens the file cask-static serves.
const staticMarker = "<!-- loom static file -->"

// staticSize is the size of that file: a small page, as a site's assets are.
const staticSize = 4 << 10

// serveStatic writes a 4 KiB page into dir and serves dir under /static/,
// so every request opens and reads a real file.
func serveStatic(_ context.Context, app *web.App, _ Plan, dir string) (func() error, error) {
	var b strings.Builder
	b.WriteString(staticMarker + "\n<!doctype html><title>loom</title><pre>\n")
	for line := 0; b.Len() < staticSize-16; line++ {
		fmt.Fprintf(&b, "line %04d of a file served from disk by the cask-static scenario\n", line)
	}
	page := b.String()[:staticSize-7] + "\n</pre>"
	if err := os.WriteFile(filepath.Join(dir, "page.html"), []byte(page), 0o644); err != nil {
		return nil, fmt.Errorf("write static file: %w", err)
	}
	app.Static("/static/", os.DirFS(dir))
	return nil, nil
}

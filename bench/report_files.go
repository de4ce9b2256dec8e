package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFiles writes results.json, report.md and report.html into dir,
// creating it if needed, and returns their paths.
func WriteFiles(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report directory: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer, *Report) error
	}{
		{"results.json", WriteJSON},
		{"report.md", WriteMarkdown},
		{"report.html", WriteHTML},
	}
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := writeFile(path, r, f.write); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, r *Report, write func(io.Writer, *Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, r); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	return f.Close()
}

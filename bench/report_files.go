package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// reportFiles are the files WriteFiles writes, in order.
var reportFiles = []struct {
	name  string
	write func(io.Writer, *Report) error
}{
	{"results.json", WriteJSON},
	{"report.md", WriteMarkdown},
	{"report.html", WriteHTML},
}

// WriteFiles writes results.json, report.md and report.html into dir,
// creating it if needed, and returns their paths.
func WriteFiles(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create report directory: %w", err)
	}
	var paths []string
	for _, f := range reportFiles {
		path := filepath.Join(dir, f.name)
		if err := writeFile(path, r, f.write); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// PrepareDir makes sure that WriteFiles can write into dir, so that a run
// that takes minutes does not find out at its end and lose its results: it
// creates dir if it does not exist (and reports that it did, for a caller
// that ends with nothing to write to remove it), refuses a dir that is not
// a directory or holds a report file's name as something other than a
// regular file, and writes and removes a probe file in it.
func PrepareDir(dir string) (created bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("create report directory: %w", err)
		}
		created = true
	case err != nil:
		return false, fmt.Errorf("report directory: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("report directory %s: not a directory", dir)
	}
	for _, f := range reportFiles {
		path := filepath.Join(dir, f.name)
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return created, fmt.Errorf("report file %s: exists and is not a regular file", path)
		}
	}
	probe, err := os.CreateTemp(dir, ".loom-write-probe-*")
	if err != nil {
		return created, fmt.Errorf("report directory not writable: %w", err)
	}
	return created, errors.Join(probe.Close(), os.Remove(probe.Name()))
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

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Status is what running the tests against a mutant gave.
type Status string

const (
	Killed      Status = "KILLED"
	Lived       Status = "LIVED"
	TimedOut    Status = "TIMED OUT"
	NotCovered  Status = "NOT COVERED"
	Unbuildable Status = "UNBUILDABLE"
)

// The environment variables the schemata file reads.
const (
	envMutant = "LOOM_MUTANT"
	envTrace  = "LOOM_MUTANT_TRACE"
)

// schemaFile is added to the package under test; its name is unlikely to
// meet one of the package's own.
const schemaFile = "zz_mutate_schemata.go"

var errBaseline = errors.New("every test fails without a mutant")

type options struct {
	ops     map[Operator]bool
	timeout time.Duration
	run     string
	short   bool
	list    bool
	only    map[int]bool
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(out)
	ops := fs.String("ops", "drop-term,widen", "operators: drop-term, widen (widen-const, widen-default, skip-default), or each by name")
	timeout := fs.Duration("timeout", 0, "time one mutant's tests may take; 0 means five times what the tests that reach it took without a mutant, at least a minute")
	runRE := fs.String("run", ".", "the tests to run, as go test -run")
	short := fs.Bool("short", true, "run the tests with -short")
	list := fs.Bool("list", false, "list the mutants without running them")
	only := fs.String("only", "", "comma-separated mutant numbers to run (as -list numbers them)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no package directory given")
	}
	o := options{ops: map[Operator]bool{}, timeout: *timeout, run: *runRE, short: *short, list: *list}
	for _, op := range strings.Split(*ops, ",") {
		switch Operator(strings.TrimSpace(op)) {
		case "widen":
			o.ops[WidenConst], o.ops[WidenDefault], o.ops[SkipDefault] = true, true, true
		case DropTerm, WidenConst, WidenDefault, SkipDefault:
			o.ops[Operator(strings.TrimSpace(op))] = true
		default:
			return fmt.Errorf("unknown operator %q", op)
		}
	}
	if *only != "" {
		o.only = map[int]bool{}
		for _, s := range strings.Split(*only, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("-only: %w", err)
			}
			o.only[n] = true
		}
	}
	if _, err := regexp.Compile(o.run); err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	for _, dir := range fs.Args() {
		if err := runPackage(ctx, dir, o, out); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	return nil
}

// pkg is one package's parsed files and mutants.
type pkg struct {
	dir     string // as given
	abs     string
	name    string
	fset    *token.FileSet
	files   map[string]*ast.File // by base name
	order   []string
	mutants []*Mutant
}

// load parses the package's non-test files, as go build selects them for
// this platform, and lists their mutants.
func load(dir string, ops map[Operator]bool) (*pkg, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	bp, err := build.ImportDir(abs, 0)
	if err != nil {
		return nil, err
	}
	p := &pkg{dir: dir, abs: abs, name: bp.Name, fset: token.NewFileSet(), files: map[string]*ast.File{}}
	next := 1
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.fset, filepath.Join(abs, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files[name] = f
		p.order = append(p.order, name)
		for _, m := range find(p.fset, filepath.Join(dir, name), f, next) {
			next = m.ID + 1
			if ops[m.Op] {
				p.mutants = append(p.mutants, m)
			}
		}
	}
	return p, nil
}

func runPackage(ctx context.Context, dir string, o options, out io.Writer) error {
	p, err := load(dir, o.ops)
	if err != nil {
		return err
	}
	if o.list {
		for _, m := range p.mutants {
			fmt.Fprintf(out, "%4d %-13s %s:%d:%d  %s  →  %s\n", m.ID, m.Op, m.File, m.Line, m.Col, m.Original, m.Mutated)
		}
		return nil
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var todo []*Mutant
	for _, m := range p.mutants {
		if o.only == nil || o.only[m.ID] {
			todo = append(todo, m)
		}
	}
	// One binary for every switchable mutant, with the trace run first.
	schema := filepath.Join(tmp, "schemata.test")
	overlay, err := p.writeSchemata(tmp)
	if err != nil {
		return err
	}
	if msg, err := compile(ctx, p.abs, overlay, schema); err != nil {
		return fmt.Errorf("build the schemata: %w\n%s", err, msg)
	}
	// Each test alone, without a mutant, records the mutants it reaches;
	// a mutant then runs only the tests that reach it.
	names, err := listTests(ctx, p.abs, schema, o.run)
	if err != nil {
		return err
	}
	first := o
	if first.timeout == 0 {
		first.timeout = 30 * time.Minute
	}
	reach := map[int][]string{} // mutant → the tests that reach it
	took := map[string]time.Duration{}
	var base time.Duration
	excluded := 0
	var good []string // the tests that pass without a mutant
	for i, name := range names {
		trace := filepath.Join(tmp, fmt.Sprintf("trace-%d", i))
		first.run = "^" + regexp.QuoteMeta(name) + "$"
		res := p.test(ctx, schema, overlay, []string{envTrace + "=" + trace}, first)
		if res.status != Lived {
			// It can tell nothing about a mutant: left out, and said so.
			fmt.Fprintf(out, "%s: %s fails without a mutant (%s), left out:\n%s\n", p.dir, name, res.status, lastLines(res.output, 5))
			excluded++
			continue
		}
		good = append(good, name)
		took[name] = res.took
		base += res.took
		seen, err := readTrace(trace)
		if err != nil {
			return err
		}
		for id := range seen {
			reach[id] = append(reach[id], name)
		}
	}
	if excluded == len(names) {
		return errBaseline
	}
	fmt.Fprintf(out, "%s: %d mutants, %d tests (%d left out); the tests without a mutant took %s\n", p.dir, len(todo), len(names), excluded, base.Round(100*time.Millisecond))

	counts := map[Operator]map[Status]int{}
	for _, m := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		var r result
		switch {
		case m.Switchable && len(reach[m.ID]) == 0:
			r = result{status: NotCovered}
		case m.Switchable:
			mo := o
			mo.run = "^(" + strings.Join(quoteAll(reach[m.ID]), "|") + ")$"
			if mo.timeout == 0 {
				var d time.Duration
				for _, name := range reach[m.ID] {
					d += took[name]
				}
				mo.timeout = max(5*d, time.Minute)
			}
			r = p.test(ctx, schema, overlay, []string{fmt.Sprintf("%s=%d", envMutant, m.ID)}, mo)
		default:
			mo := o
			mo.run = "^(" + strings.Join(quoteAll(good), "|") + ")$"
			if mo.timeout == 0 {
				mo.timeout = max(5*base, time.Minute)
			}
			r = p.single(ctx, tmp, m, mo)
		}
		if counts[m.Op] == nil {
			counts[m.Op] = map[Status]int{}
		}
		counts[m.Op][r.status]++
		detail := ""
		if r.took > 0 {
			detail = " (" + r.took.Round(100*time.Millisecond).String()
			if r.by != "" {
				detail += ", " + r.by
			}
			detail += ")"
		}
		fmt.Fprintf(out, "%-11s %4d %-13s %s:%d:%d  %s  →  %s%s\n", r.status, m.ID, m.Op, m.File, m.Line, m.Col, m.Original, m.Mutated, detail)
	}
	for _, op := range []Operator{DropTerm, WidenConst, WidenDefault, SkipDefault} {
		c := counts[op]
		if c == nil {
			continue
		}
		eff := "-"
		if k, l := c[Killed], c[Lived]; k+l > 0 {
			eff = fmt.Sprintf("%.1f%%", 100*float64(k)/float64(k+l))
		}
		fmt.Fprintf(out, "%s %s: killed %d, lived %d, timed out %d, not covered %d, unbuildable %d; efficacy %s\n",
			p.dir, op, c[Killed], c[Lived], c[TimedOut], c[NotCovered], c[Unbuildable], eff)
	}
	return nil
}

// writeSchemata writes every file with a switchable mutant, each mutant
// behind its switch, and the switch itself, and returns the overlay file
// that puts them in the package.
func (p *pkg) writeSchemata(tmp string) (string, error) {
	changed := map[string]bool{}
	for _, m := range p.mutants {
		if !m.Switchable {
			continue
		}
		on := &ast.CallExpr{Fun: ast.NewIdent("loomMutateOn"), Args: []ast.Expr{&ast.BasicLit{Kind: token.INT, Value: strconv.Itoa(m.ID)}}}
		m.replace(m.switchF(on))
		changed[filepath.Base(m.File)] = true
	}
	replace := map[string]string{}
	for _, name := range p.order {
		if !changed[name] {
			continue
		}
		dst := filepath.Join(tmp, "schemata-"+name)
		if err := printFile(dst, p.fset, p.files[name]); err != nil {
			return "", err
		}
		replace[filepath.Join(p.abs, name)] = dst
	}
	// The files go back as they were, for the mutants built one at a time.
	for _, m := range p.mutants {
		if m.Switchable {
			m.replace(m.node)
		}
	}
	n := 0
	if len(p.mutants) > 0 {
		n = p.mutants[len(p.mutants)-1].ID
	}
	sw := filepath.Join(tmp, schemaFile)
	if err := os.WriteFile(sw, []byte(fmt.Sprintf(schemaSource, p.name, envMutant, envTrace, n+1)), 0o644); err != nil {
		return "", err
	}
	replace[filepath.Join(p.abs, schemaFile)] = sw
	return writeOverlay(filepath.Join(tmp, "schemata.json"), replace)
}

// schemaSource is the switch: loomMutateOn(id) reports whether mutant id
// is the one this run plants, and records, when tracing, that the tests
// reached it.
const schemaSource = `package %s

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

var loomMutateID, _ = strconv.Atoi(os.Getenv(%q))

// The trace file is opened once, at start: a test that runs out of file
// descriptors must not lose the record of what it reached.
var loomMutateTrace = func() *os.File {
	if path := os.Getenv(%q); path != "" {
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		return f
	}
	return nil
}()

var (
	loomMutateSeen [%d]atomic.Bool
	loomMutateMu   sync.Mutex
)

func loomMutateOn(id int) bool {
	if loomMutateTrace != nil && !loomMutateSeen[id].Swap(true) {
		loomMutateMu.Lock()
		loomMutateTrace.WriteString(strconv.Itoa(id) + "\n")
		loomMutateMu.Unlock()
	}
	return id == loomMutateID
}
`

// listTests lists the tests, examples and fuzz targets of a test binary
// that match run.
func listTests(ctx context.Context, dir, bin, run string) ([]string, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.list="+run)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list the tests: %w", err)
	}
	var names []string
	for _, l := range strings.Fields(string(b)) {
		if strings.HasPrefix(l, "Test") || strings.HasPrefix(l, "Example") || strings.HasPrefix(l, "Fuzz") {
			names = append(names, l)
		}
	}
	return names, nil
}

func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return q
}

func readTrace(path string) (map[int]bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[int]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, line := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(line); err == nil {
			seen[n] = true
		}
	}
	return seen, nil
}

// single builds and runs a mutant that cannot be switched at run time.
func (p *pkg) single(ctx context.Context, tmp string, m *Mutant, o options) result {
	name := filepath.Base(m.File)
	m.replace(m.mutant())
	dst := filepath.Join(tmp, fmt.Sprintf("mutant-%d-%s", m.ID, name))
	err := printFile(dst, p.fset, p.files[name])
	m.replace(m.node)
	if err != nil {
		return result{status: Unbuildable, by: err.Error()}
	}
	defer os.Remove(dst)
	overlay, err := writeOverlay(filepath.Join(tmp, fmt.Sprintf("mutant-%d.json", m.ID)), map[string]string{filepath.Join(p.abs, name): dst})
	if err != nil {
		return result{status: Unbuildable, by: err.Error()}
	}
	bin := filepath.Join(tmp, "mutant.test")
	defer os.Remove(bin)
	if msg, err := compile(ctx, p.abs, overlay, bin); err != nil {
		return result{status: Unbuildable, by: firstLine(msg)}
	}
	return p.test(ctx, bin, overlay, nil, o)
}

type result struct {
	status Status
	took   time.Duration
	by     string // the first test that failed, or why it did not build
	output string
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// test runs a test binary in the package's directory, as go test does.
// The overlay is passed on through GOFLAGS, so that a test that builds a
// command of its own builds the mutant too.
func (p *pkg) test(ctx context.Context, bin, overlay string, env []string, o options) result {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	args := []string{"-test.count=1", "-test.failfast", "-test.run=" + o.run}
	if o.short {
		args = append(args, "-test.short")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = p.abs
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -overlay="+overlay))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	// The tests' own children die with them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := result{took: time.Since(start), output: buf.String()}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.status = TimedOut
	case err == nil:
		r.status = Lived
	default:
		r.status = Killed
		if m := failLine.FindStringSubmatch(r.output); m != nil {
			r.by = m[1]
		} else {
			r.by = firstLine(lastLines(r.output, 3))
		}
	}
	return r
}

// compile builds the package's test binary with the overlay.
func compile(ctx context.Context, dir, overlay, bin string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-vet=off", "-o", bin, "-overlay="+overlay, ".")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	return string(b), err
}

func writeOverlay(path string, replace map[string]string) (string, error) {
	b, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

func printFile(path string, fset *token.FileSet, f *ast.File) error {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}).Fprint(&b, fset, f); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

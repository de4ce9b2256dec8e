package main

import (
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"regexp"
	"slices"
	"strings"
)

// Operator names a kind of mutant.
type Operator string

const (
	// DropTerm replaces one term of an && or || chain by the chain's
	// identity (true in &&, false in ||), so the term no longer matters.
	DropTerm Operator = "drop-term"
	// WidenConst doubles a numeric constant or package-level variable that
	// names a default or a bound.
	WidenConst Operator = "widen-const"
	// WidenDefault doubles the value a zero-means-default branch assigns.
	WidenDefault Operator = "widen-default"
	// SkipDefault removes a zero-means-default branch, so zero stays zero.
	SkipDefault Operator = "skip-default"
)

// A Mutant is one change to one file of a package.
type Mutant struct {
	ID       int
	Op       Operator
	File     string // path as given to find
	Line     int
	Col      int
	Original string // the expression before, on one line
	Mutated  string // the same expression after, on one line
	// Switchable mutants are compiled all together into one test binary and
	// chosen at run time (mutant schemata); the others are compiled one at a
	// time, because they sit where only a constant may stand.
	Switchable bool

	node    ast.Expr // the node replaced: a term, a value, an if condition
	replace func(by ast.Expr)
	mutant  func() ast.Expr // the node's mutated form, for a single-mutant build
	switchF func(on ast.Expr) ast.Expr
}

// namedBound matches the names of constants and variables that state a
// default or a bound; boundDoc matches their doc comments.
var (
	namedBound = regexp.MustCompile(`(?i)default|max|limit`)
	boundDoc   = regexp.MustCompile(`(?i)\b(defaults?|max|maximum|limits?|at most|bounds?|caps?)\b`)
)

// find lists the mutants of one parsed file, numbering them from next.
//
// drop-term: every operand of an && or || chain (a && b && c has the
// terms a, b and c; a parenthesised chain inside is a term, and its own
// terms are mutants too), except the literals true and false.
//
// widen-const: every package-level const or var whose name matches
// default, max or limit (any case), or whose doc or line comment says
// default, max, maximum, limit, at most, bound or cap, and whose value is
// numeric (see numeric): the value is doubled.
//
// widen-default and skip-default: an if statement without init or else
// whose condition is X == 0, X <= 0 or X < 1, and whose body is the one
// assignment X = V, is a zero-means-default branch: V is doubled when
// numeric, and the branch is removed (its condition made false).
func find(fset *token.FileSet, name string, f *ast.File, next int) []*Mutant {
	var ms []*Mutant
	add := func(m *Mutant) {
		pos := fset.Position(m.node.Pos())
		m.File, m.Line, m.Col = name, pos.Line, pos.Column
		ms = append(ms, m)
	}
	inConst := map[ast.Node]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if g.Tok == token.CONST {
				inConst[vs] = true
			}
			for i, n := range vs.Names {
				if i >= len(vs.Values) || !numeric(vs.Values[i]) {
					continue
				}
				if !namedBound.MatchString(n.Name) && !saysBound(g, vs) {
					continue
				}
				i := i
				v := vs.Values[i]
				add(&Mutant{
					Op:       WidenConst,
					Original: n.Name + " = " + oneLine(fset, v),
					Mutated:  n.Name + " = " + oneLine(fset, doubled(v)),
					node:     v,
					replace:  func(by ast.Expr) { vs.Values[i] = by },
					mutant:   func() ast.Expr { return doubled(v) },
				})
			}
		}
	}
	// Terms in constant declarations cannot call the switch.
	var stack []ast.Node
	constDepth := 0
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if inConst[top] {
				constDepth--
			}
			return true
		}
		stack = append(stack, n)
		if inConst[n] {
			constDepth++
		}
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.LAND && n.Op != token.LOR {
				break
			}
			for _, side := range []*ast.Expr{&n.X, &n.Y} {
				t := *side
				if b, ok := t.(*ast.BinaryExpr); ok && b.Op == n.Op {
					continue // its own operands are the chain's terms
				}
				if id, ok := t.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
					continue
				}
				add(dropTerm(fset, chainTop(stack), side, t, n.Op, constDepth == 0))
			}
		case *ast.IfStmt:
			if m := zeroDefault(fset, n); m != nil {
				for _, m := range m {
					add(m)
				}
			}
		}
		return true
	})
	// Numbered in the order of the source, so that -list and -only agree
	// across runs on the same code.
	slices.SortStableFunc(ms, func(a, b *Mutant) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	for _, m := range ms {
		m.ID = next
		next++
	}
	return ms
}

// chainTop returns the whole && or || chain that the last node of stack
// belongs to: a && b && c parses as (a && b) && c.
func chainTop(stack []ast.Node) ast.Expr {
	i := len(stack) - 1
	op := stack[i].(*ast.BinaryExpr).Op
	for i > 0 {
		p, ok := stack[i-1].(*ast.BinaryExpr)
		if !ok || p.Op != op {
			break
		}
		i--
	}
	return stack[i].(ast.Expr)
}

// dropTerm is the mutant that makes term t of chain expr (at *side) its
// identity. The term stays in the code behind a short circuit, (true || t)
// in && and (false && t) in ||: it is never evaluated, as if removed, and
// the variables it names stay used, so the mutant compiles.
func dropTerm(fset *token.FileSet, chain ast.Expr, side *ast.Expr, t ast.Expr, op token.Token, switchable bool) *Mutant {
	identity := "true"
	if op == token.LOR {
		identity = "false"
	}
	before := oneLine(fset, chain)
	*side = ast.NewIdent(identity)
	after := oneLine(fset, chain)
	*side = t
	return &Mutant{
		Op:         DropTerm,
		Original:   before,
		Mutated:    after,
		Switchable: switchable,
		node:       t,
		replace:    func(by ast.Expr) { *side = by },
		mutant: func() ast.Expr {
			return paren(&ast.BinaryExpr{X: ast.NewIdent(identity), Op: invert(op), Y: t})
		},
		switchF: func(on ast.Expr) ast.Expr {
			// &&: (on || t); ||: (!on && t)
			if op == token.LAND {
				return paren(&ast.BinaryExpr{X: on, Op: token.LOR, Y: t})
			}
			return paren(&ast.BinaryExpr{X: &ast.UnaryExpr{Op: token.NOT, X: on}, Op: token.LAND, Y: t})
		},
	}
}

// zeroDefault returns the mutants of a zero-means-default branch, or nil.
func zeroDefault(fset *token.FileSet, s *ast.IfStmt) []*Mutant {
	if s.Init != nil || s.Else != nil || len(s.Body.List) != 1 {
		return nil
	}
	c, ok := s.Cond.(*ast.BinaryExpr)
	if !ok {
		return nil
	}
	lit, ok := c.Y.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT ||
		!(((c.Op == token.EQL || c.Op == token.LEQ) && lit.Value == "0") || (c.Op == token.LSS && lit.Value == "1")) {
		return nil
	}
	as, ok := s.Body.List[0].(*ast.AssignStmt)
	if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 ||
		oneLine(fset, as.Lhs[0]) != oneLine(fset, c.X) {
		return nil
	}
	var ms []*Mutant
	v := as.Rhs[0]
	if numeric(v) {
		ms = append(ms, &Mutant{
			Op:       WidenDefault,
			Original: oneLine(fset, as),
			Mutated:  oneLine(fset, c.X) + " = " + oneLine(fset, doubled(v)),
			node:     v,
			replace:  func(by ast.Expr) { as.Rhs[0] = by },
			mutant:   func() ast.Expr { return doubled(v) },
		})
	}
	cond := s.Cond
	ms = append(ms, &Mutant{
		Op:         SkipDefault,
		Original:   "if " + oneLine(fset, cond) + " { " + oneLine(fset, as) + " }",
		Mutated:    "if false { " + oneLine(fset, as) + " }",
		Switchable: true,
		node:       cond,
		replace:    func(by ast.Expr) { s.Cond = by },
		mutant: func() ast.Expr {
			return paren(&ast.BinaryExpr{X: ast.NewIdent("false"), Op: token.LAND, Y: cond})
		},
		switchF: func(on ast.Expr) ast.Expr {
			return paren(&ast.BinaryExpr{X: &ast.UnaryExpr{Op: token.NOT, X: on}, Op: token.LAND, Y: cond})
		},
	})
	return ms
}

// numeric reports whether e is a numeric expression with at least one
// number literal in it: literals, names, selectors, parentheses, unary
// + and -, the arithmetic and shift operators, and conversions of one
// argument. iota makes it an enumeration, not a bound.
func numeric(e ast.Expr) bool {
	lits := 0
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil, *ast.SelectorExpr, *ast.ParenExpr:
		case *ast.Ident:
			if n.Name == "iota" {
				ok = false
			}
		case *ast.BasicLit:
			if n.Kind != token.INT && n.Kind != token.FLOAT {
				ok = false
			}
			lits++
		case *ast.UnaryExpr:
			if n.Op != token.ADD && n.Op != token.SUB {
				ok = false
			}
		case *ast.BinaryExpr:
			switch n.Op {
			case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.SHL, token.SHR:
			default:
				ok = false
			}
		case *ast.CallExpr:
			if len(n.Args) != 1 {
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return ok && lits > 0
}

func saysBound(g *ast.GenDecl, vs *ast.ValueSpec) bool {
	for _, cg := range []*ast.CommentGroup{vs.Doc, vs.Comment} {
		if cg != nil && boundDoc.MatchString(cg.Text()) {
			return true
		}
	}
	return len(g.Specs) == 1 && g.Doc != nil && boundDoc.MatchString(g.Doc.Text())
}

func doubled(e ast.Expr) ast.Expr {
	return &ast.BinaryExpr{X: paren(e), Op: token.MUL, Y: &ast.BasicLit{Kind: token.INT, Value: "2"}}
}

func paren(e ast.Expr) ast.Expr {
	if _, ok := e.(*ast.ParenExpr); ok {
		return e
	}
	return &ast.ParenExpr{X: e}
}

func invert(op token.Token) token.Token {
	if op == token.LAND {
		return token.LOR
	}
	return token.LAND
}

// oneLine prints n with its white space collapsed to single spaces.
func oneLine(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

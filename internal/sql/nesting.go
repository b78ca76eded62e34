package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Nesting limits.
//
// Everything that walks a statement recurses: the parser's Accept visitors, the planner, the
// expression compiler and the compiled expressions' Eval. A goroutine's stack grows up to 1 GB and
// then ends the whole process ("fatal error: stack overflow", which recover cannot catch), and the
// compiler needs kilobytes per level, so 'SELECT ABS(ABS(...' 300,000 levels deep killed the
// server. The parser itself does not recurse (goyacc keeps its own stack on the heap), so the
// statement is bounded between parsing and everything else, and the compiler and the planner keep
// their own counts as a second line.
//
// Errors, as MySQL answers the same situations: 1436 ER_STACK_OVERRUN_NEED_MORE for a statement
// nested more than maxNesting levels deep (MySQL reports it when its thread stack runs low), and
// 1473 ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT for query blocks (subqueries, derived tables, views)
// nested more than maxSelectNesting deep, MySQL's own limit.
const (
	// maxNesting bounds the depth of a statement's syntax tree (every node counts: a function call,
	// an operator, a parenthesis, each term of an a OR b OR c chain, which the parser nests). Real
	// statements stay below a hundred; the compiler's stack at this depth is a few megabytes.
	maxNesting = 2000
)

func errNesting() error {
	return sqlerr.New(sqlerr.ErrStackOverrun, "Thread stack overrun: the statement is nested more than %d levels deep (kiln's limit); simplify the statement", maxNesting)
}

// checkTextNesting is a cheap scan run before the parser: parentheses nested deeper than maxNesting
// (outside strings and comments) refuse the statement without building its tree, which costs the
// parser hundreds of bytes of heap per level. Text shorter than the limit cannot be that deep.
func checkTextNesting(text string) error {
	if len(text) <= maxNesting {
		return nil
	}
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '(':
			if depth++; depth > maxNesting {
				return errNesting()
			}
		case ')':
			if depth > 0 {
				depth--
			}
		case '\'', '"', '`':
			// Skip the quoted text; a doubled quote reopens it, a backslash escapes the next byte.
			// Getting an odd case wrong only moves the decision to checkTreeNesting.
			for i++; i < len(text) && text[i] != c; i++ {
				if text[i] == '\\' && c != '`' {
					i++
				}
			}
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case '-':
			if i+2 < len(text) && text[i+1] == '-' && (text[i+2] == ' ' || text[i+2] == '\t' || text[i+2] == '\n') {
				for i < len(text) && text[i] != '\n' {
					i++
				}
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '*' && (i+2 >= len(text) || text[i+2] != '!') {
				// A comment (an executable /*! comment is SQL: its parentheses count).
				for i += 2; i+1 < len(text) && !(text[i] == '*' && text[i+1] == '/'); i++ {
				}
				i++
			}
		}
	}
	return nil
}

// checkTreeNesting bounds the depth of parsed statements before anything walks them recursively.
// The walk itself recurses, but never deeper than the limit: below it, children are skipped. Chains
// without parentheses (NOT NOT ..., ~~~..., 1+1+...) are found here. Statements shorter than half
// the limit cannot be that deep and are not walked, which keeps OLTP statements free of the cost.
func checkTreeNesting(text string, stmts []ast.StmtNode) error {
	if 2*len(text) < maxNesting {
		return nil
	}
	v := &depthVisitor{}
	for _, st := range stmts {
		st.Accept(v)
		if v.over {
			return errNesting()
		}
	}
	return nil
}

type depthVisitor struct {
	depth int
	over  bool
}

func (v *depthVisitor) Enter(n ast.Node) (ast.Node, bool) {
	v.depth++
	if v.depth > maxNesting {
		v.over = true
		return n, true // skip the children: the walk goes no deeper
	}
	return n, v.over
}

func (v *depthVisitor) Leave(n ast.Node) (ast.Node, bool) {
	v.depth--
	return n, true
}

// enterExpr counts one level of the session's expression compilation (subqueries included, as they
// compile inside the expression that holds them); leaveExpr undoes it.
func (s *Session) enterExpr() error {
	s.exprDepth++
	if s.exprDepth > maxNesting {
		s.exprDepth--
		return errNesting()
	}
	return nil
}

func (s *Session) leaveExpr() { s.exprDepth-- }

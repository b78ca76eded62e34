package plan

import "github.com/pingcap/tidb/pkg/parser/ast"

// HasSubquery reports whether a statement or expression contains a subquery: the facade gives such a
// statement a transaction even without a FROM clause, and DDL refuses one in a CHECK constraint
// before binding it.
func HasSubquery(n ast.Node) bool {
	v := &subqueryFinder{}
	n.Accept(v)
	return v.found
}

type subqueryFinder struct{ found bool }

func (v *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.SubqueryExpr); ok {
		v.found = true
		return n, true
	}
	return n, v.found
}
func (v *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// parseSQL runs the TiDB parser and turns a panic inside it into an error for this statement. The
// parser's literal decoding (the test_driver's MyDecimal) panics on a number literal of more digits
// than its decimal holds; MySQL answers such input with an error, and so must we, without leaving
// it to the connection's last-resort guard (which logs a stack and answers 1105).
func parseSQL(p *parser.Parser, text string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if strings.Contains(msg, "MyDecimal") {
				err = sqlerr.New(sqlerr.ErrIllegalValueForType,
					"Illegal decimal value found during parsing: a number literal has more digits than a DECIMAL holds")
				return
			}
			err = sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax (the parser failed: %s)", msg)
		}
	}()
	stmts, _, err = p.ParseSQL(text)
	return stmts, err
}

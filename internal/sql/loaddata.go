package sql

import (
	"io"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// LOAD DATA [LOCAL] INFILE, as MySQL 8 does it (sql/sql_load.cc).
//
// With LOCAL the file comes from the client, through the connection's LocalFileOpener. LOAD DATA
// INFILE (a file on the server) reads inside secure_file_priv (outfile.go); with secure_file_priv =
// NULL, the default, it is refused (1290) after the table and columns have been resolved, as in
// MySQL.
//
// The file is read as a stream (dml's fieldReader, a port of MySQL's READ_INFO for delimited rows) and
// each row is converted and written as INSERT writes it (dml.Inserter), all in the
// statement's transaction: the statement commits or rolls back as a whole. Nothing holds more than
// one field of the file in memory; the transaction's write set grows with the rows, as for a big
// INSERT ... SELECT.
//
// Error handling follows MySQL: with LOCAL, duplicate keys are skipped as with IGNORE unless
// REPLACE is given, and with IGNORE semantics data-interpretation problems (bad values, NULL for a
// NOT NULL column, too few or too many fields) are warnings; under REPLACE they are errors in strict
// mode. A failed statement still reads the client's file to its end (LocalFile.Close drains it), so
// the connection stays in sync.

// LocalFileOpener is implemented by a ResultWriter whose connection can ask the client for a file
// (the wire protocol's LOCAL INFILE request). LOAD DATA LOCAL asserts it on the writer its
// statement gets; a writer without it (an internal caller) answers as a client with local files
// disabled.
type LocalFileOpener interface {
	// LocalFilesEnabled reports whether the client accepts LOCAL INFILE requests (it set
	// CLIENT_LOCAL_FILES).
	LocalFilesEnabled() bool
	// OpenLocalFile asks the client for the file it names and returns the file's bytes as a
	// stream, which reads io.EOF at the file's end. Close must be called: it reads and drops what
	// the client has not sent yet, so that the connection is in sync for the statement's reply. An
	// error before the request is sent (the client did not enable local files: 3948) leaves the
	// connection as it was; a read error means the connection is gone.
	OpenLocalFile(name string) (io.ReadCloser, error)
}

// ErrLocalFilesDisabled is the error a LOAD DATA LOCAL gets when the client did not enable local
// files (CLIENT_LOCAL_FILES) or the server's local_infile is OFF. MySQL 8.0.19 and later answer both
// with 3948; earlier versions and MariaDB use 1148 ER_NOT_ALLOWED_COMMAND.
func ErrLocalFilesDisabled() *sqlerr.Error {
	return sqlerr.New(sqlerr.ErrClientLocalFilesDisabled, "Loading local data is disabled; this must be enabled on both the client and server sides")
}

// loadData runs LOAD DATA.
func (s *Session) loadData(env *expr.Env, x *ast.LoadDataStmt, w proto.ResultWriter, more bool) error {
	local := x.FileLocRef == ast.FileLocClient
	var opener LocalFileOpener
	if local {
		// Checked first, as in MySQL: the error does not depend on the table.
		var ok bool
		opener, ok = w.(LocalFileOpener)
		if !ok || !opener.LocalFilesEnabled() || types.ToIntLenient(s.db.globals.get(sysvar.LocalInfile)) == 0 {
			return ErrLocalFilesDisabled()
		}
	}
	if x.Format != nil && !strings.EqualFold(*x.Format, "delimited data") || len(x.Options) > 0 {
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support 'LOAD DATA FORMAT or WITH options'")
	}
	var ok proto.OK
	err := s.stmtScope(env, func() error {
		var err error
		ok, err = dml.LoadData(env, s.dmlSess(), x, localFile(opener))
		return err
	})
	if err != nil {
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

var loadIgnoreRowsRe = regexp.MustCompile(`(?i)(\bIGNORE\s+\d+\s+)ROWS\b`)

// loadDataFallback rewrites what MySQL accepts in LOAD DATA and the parser does not, for a second
// parse after the first failed: IGNORE n ROWS (a synonym of IGNORE n LINES). ok is false if the
// text is not a single LOAD DATA statement with it.
func loadDataFallback(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if len(t) < 9 || !strings.EqualFold(t[:4], "LOAD") || !loadIgnoreRowsRe.MatchString(t) {
		return "", false
	}
	return loadIgnoreRowsRe.ReplaceAllString(text, "${1}LINES"), true
}

// localFile is LOAD DATA's opener as dml sees it: nil without LOCAL (a nil LocalFileOpener must
// not become a non-nil interface holding nil).
func localFile(o LocalFileOpener) dml.LocalFile {
	if o == nil {
		return nil
	}
	return o
}

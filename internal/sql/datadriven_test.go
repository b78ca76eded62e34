package sql

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// testDB opens a DB over the real commit path (repl over the binlog) on an in-memory filesystem.
func testDB(t testing.TB) *DB {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "8.0.40-kiln-test"})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// textWriter renders results as text: rows tab-separated, OK results as "ok" with counts.
type textWriter struct {
	b        strings.Builder
	cols     []proto.Column
	showCols bool
	// showTypes adds each column's wire type and decimals (name:type/decimals) to the header.
	showTypes bool
}

func (w *textWriter) Columns(cols []proto.Column) error {
	w.cols = cols
	if w.showCols {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
			if w.showTypes {
				names[i] += fmt.Sprintf(":%s/%d", ptypes.TypeStr(c.Type), c.Decimals)
			}
		}
		w.b.WriteString(strings.Join(names, "\t") + "\n")
	}
	return nil
}

func (w *textWriter) Row(vals []types.Value) error {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v.IsNull() {
			parts[i] = "NULL"
		} else {
			parts[i] = string(types.AppendText(nil, v))
		}
	}
	w.b.WriteString(strings.Join(parts, "\t") + "\n")
	return nil
}

func (w *textWriter) EndRows(warnings uint16, more bool) error {
	if warnings > 0 {
		fmt.Fprintf(&w.b, "warnings: %d\n", warnings)
	}
	return nil
}

func (w *textWriter) OK(ok proto.OK, more bool) error {
	fmt.Fprintf(&w.b, "ok affected=%d", ok.AffectedRows)
	if ok.LastInsertID != 0 {
		fmt.Fprintf(&w.b, " last_insert_id=%d", ok.LastInsertID)
	}
	if ok.Warnings != 0 {
		fmt.Fprintf(&w.b, " warnings=%d", ok.Warnings)
	}
	w.b.WriteString("\n")
	return nil
}

// TestSQL runs the statement files in testdata/: each `sql` block runs statements (one session per
// file unless `session=name` picks another) and records rows, OK counts or the MySQL error code.
func TestSQL(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		db := testDB(t)
		sessions := map[string]*Session{}
		get := func(name string) *Session {
			s, ok := sessions[name]
			if !ok {
				s = db.NewSession(uint32(len(sessions)+1), "root", "localhost", "")
				sessions[name] = s
			}
			return s
		}
		_ = filepath.Base(path)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			name := "default"
			if d.HasArg("session") {
				d.ScanArgs(t, "session", &name)
			}
			s := get(name)
			w := &textWriter{showCols: d.HasArg("cols") || d.HasArg("types"), showTypes: d.HasArg("types")}
			switch d.Cmd {
			case "sql":
				for _, stmt := range splitStatements(d.Input) {
					if err := s.Query(context.Background(), stmt, w); err != nil {
						e := sqlerr.As(err)
						fmt.Fprintf(&w.b, "error %d (%s): %s\n", e.Code, e.State, e.Message)
					}
				}
				return w.b.String()
			case "explain":
				if err := s.Query(context.Background(), "EXPLAIN "+d.Input, w); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return w.b.String()
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

// splitStatements splits on lines ending with ';' so a block can hold several statements, each with
// its own result.
func splitStatements(in string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(in, "\n") {
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

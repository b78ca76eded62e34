package sql

import (
	"context"
	"fmt"
	"strings"

	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// With kiln_log_before_images ON, row changes carry the row's previous value (decoded here back to
// column values); secondary index entries carry none; with it OFF, nothing does.
func TestBeforeImagesSQL(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	rec := &repltest.Recorder{Node: st.Node}
	db, err := Open(context.Background(), txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), rec), Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession(1, "root", "localhost", "")
	run := func(q string) {
		t.Helper()
		if err := s.Query(context.Background(), q, &textWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run("CREATE DATABASE d")
	run("USE d")
	run("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), KEY kv (v))")
	run("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	run("SET GLOBAL kiln_log_before_images = ON")
	mark := len(rec.Records())
	run("UPDATE t SET v = 'z' WHERE id = 1")
	run("DELETE FROM t WHERE id = 2")
	run("INSERT INTO t VALUES (3, 'c')")
	run("SET GLOBAL kiln_log_before_images = OFF")
	run("UPDATE t SET v = 'y' WHERE id = 1")
	tbl, _ := db.Catalog().Table("d", "t")
	var got []string
	for _, r := range rec.Records()[mark:] {
		cs, err := txn.Changes(r)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, c := range cs {
			if c.Kind != "set" && c.Kind != "delete" {
				continue
			}
			what := "index"
			if rowenc.IsRowKey(c.Key) {
				what = "row"
			}
			desc := fmt.Sprintf("%s %s", c.Kind, what)
			switch {
			case !c.HadBefore:
			case !c.Existed:
				desc += " before=absent"
			default:
				row, err := exec.DecodeRow(tbl, c.Before)
				if err != nil {
					t.Fatal(err)
				}
				vals := make([]string, len(row))
				for i, v := range row {
					vals[i] = string(types.AppendText(nil, v))
				}
				desc += " before=(" + strings.Join(vals, ",") + ")"
			}
			parts = append(parts, desc)
		}
		got = append(got, strings.Join(parts, "; "))
	}
	want := []string{
		"set row before=(1,a); delete index; set index",
		"delete row before=(2,b); delete index",
		"set row before=absent; set index",
		"set row; set index; delete index",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

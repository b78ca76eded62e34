package ddl

import (
	"encoding/json"
	"fmt"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/txn"
)

// Logical DDL: operations that go into the log as a small description and are executed by every node
// when it applies the record, instead of as their (table-sized) key changes.

// opBuildIndexes builds secondary index entries from a table's rows: CREATE INDEX, ALTER TABLE ADD
// INDEX, and the rebuild of an index that loses a column.
const opBuildIndexes = "sql.build-indexes"

// buildIndexesOp is the payload: the table definition the entries are built with (the one the same
// record stores in the catalog) and the ids of the indexes to build.
type buildIndexesOp struct {
	Table   json.RawMessage `json:"table"`
	Indexes []uint32        `json:"indexes"`
}

// LogicalOps are the SQL layer's logical operations, for the record applier the node is started with
// (txn.NewApplier): every node, and every replay, must know each operation a record may carry.
func LogicalOps() map[string]txn.LogicalFunc {
	return map[string]txn.LogicalFunc{opBuildIndexes: applyBuildIndexes}
}

// applyBuildIndexes scans the table's rows in the engine (every earlier record applied: the DDL held
// the database's exclusive metadata lock, so no other writer can be in flight) and writes the entries.
// Uniqueness was checked by the statement; the rows cannot have changed since.
func applyBuildIndexes(payload []byte, eng txn.Reader, b txn.Batch) error {
	var op buildIndexesOp
	if err := json.Unmarshal(payload, &op); err != nil {
		return fmt.Errorf("decode build-indexes: %w", err)
	}
	var tbl catalog.Table
	if err := json.Unmarshal(op.Table, &tbl); err != nil {
		return fmt.Errorf("decode build-indexes table: %w", err)
	}
	tbl.Init()
	var ixs []*catalog.Index
	for _, id := range op.Indexes {
		var found *catalog.Index
		for _, ix := range tbl.Indexes {
			if ix.ID == id {
				found = ix
			}
		}
		if found == nil || found.Primary {
			return fmt.Errorf("build-indexes: table %d has no secondary index %d", tbl.ID, id)
		}
		ixs = append(ixs, found)
	}
	lo, hi := rowenc.IndexSpan(tbl.ID, rowenc.PrimaryIndexID)
	it, err := eng.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		row, err := exec.DecodeRow(&tbl, it.Value())
		if err != nil {
			return fmt.Errorf("build-indexes: table %d row %x: %w", tbl.ID, it.Key(), err)
		}
		for _, ix := range ixs {
			k, v, _ := exec.SecondaryKey(&tbl, ix, row)
			if err := b.Set(k, v); err != nil {
				return err
			}
		}
	}
	return it.Error()
}

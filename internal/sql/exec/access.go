package exec

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// AccessKind is how one table of a query is read.
type AccessKind uint8

const (
	AccFull   AccessKind = iota // every row, through the primary key
	AccPoint                    // one key of a unique index (PK or unique secondary)
	AccBatch                    // a list of keys of a unique index (IN list)
	AccRange                    // an index range: equality prefix, optional range on the next column
	AccRanges                   // a union of ranges on the column after the equality prefix (OR)
)

// Access is the plan for reading one table. Bound expressions are evaluated when the access is opened,
// against the row built so far (earlier join levels), so a prepared plan is reused with new parameters
// and an inner join level is a lookup per outer row (index nested loop).
type Access struct {
	Tbl  *catalog.Table
	Kind AccessKind
	Idx  *catalog.Index
	Eq   []expr.Expr // values for the first len(Eq) index columns
	In   []expr.Expr // AccBatch: values for index column len(Eq)
	// Tuples (AccBatch, no Eq): a row constructor IN list, `(a, b) IN ((1, 2), (3, 4))`, as values
	// for the index's first len(Tuples[i]) columns, in index order.
	Tuples   [][]expr.Expr
	Lo, Hi   expr.Expr // AccRange: bounds on index column len(Eq); nil = open
	LoIncl   bool
	HiIncl   bool
	Ors      []OrRange // AccRanges
	Reverse  bool
	Covering bool         // the index holds every column the query reads
	Latest   bool         // current read: latest committed state (DML, locking reads)
	Lock     txn.LockMode // lock each row read (0: none)
	Hint     string       // why this path was chosen, for EXPLAIN
	// ColPos maps a stored row's column ids to row offsets when decoding primary rows: the
	// table's ColPos with the columns the query never reads mapped to -1, so that their values
	// (sysbench's CHAR(60) pad, a SUM's unread strings) are skipped instead of copied; the
	// skipped offsets hold the column's Absent value. nil decodes every column. The planner sets
	// it for plain reads only: locking and current reads feed UPDATE/DELETE, which need whole rows.
	ColPos []int
}

// colPos is the column map to decode primary rows with.
func (a *Access) colPos() []int {
	if a.ColPos != nil {
		return a.ColPos
	}
	return a.Tbl.ColPos
}

// OrRange is one disjunct of an OR of ranges on a column; nil bounds are open.
type OrRange struct {
	Lo, Hi         expr.Expr
	LoIncl, HiIncl bool
}

// RowIter produces rows; a nil row with a nil error is the end.
type RowIter interface {
	Next() ([]types.Value, error)
	Close()
}

// accessIter runs an access.
type accessIter struct {
	a      *Access
	env    *expr.Env
	t      *txn.Txn
	keys   [][]byte      // point/batch keys still to read
	onekey [1][]byte     // keys' array for a point read
	spans  [][2][]byte   // remaining key ranges [lo, hi) to scan, in scan order (IN lists, OR of ranges)
	it     *txn.Iterator // range or full scan
	done   bool
	// exact: the scan's range bounds are the condition's own values, keyed without conversion
	// (integers on an integer column), so every row it returns satisfies them (Level.Residual).
	exact bool
	rows  rowSlab      // the rows it returns
	strs  rowenc.Arena // their strings
	// reuse: the consumer keeps no row (Select.OpenStreaming): decode every row into one and
	// its strings into the same arena chunk, overwritten by the next row.
	reuse bool
	// keepStrs (with reuse): the consumer keeps decoded values but not the row slice (a sort
	// above a projection): the row is reused, the arena is not reset.
	keepStrs bool
	one      []types.Value
	// entry, entryStrs and pk: scratch for the index entry a non-covering read turns into a
	// primary key (entryRow).
	entry     []types.Value
	entryStrs rowenc.Arena
	pk        []byte
	// wait is innodb_lock_wait_timeout, read at the first row lock (waitSet).
	wait    time.Duration
	waitSet bool
	// perRow: every row gets allocations of its own, for callers that keep a filtered subset of
	// the rows (a join cache), where a kept row would otherwise hold its whole chunk alive beyond
	// what the statement's memory quota counts for it.
	perRow bool
}

// open starts reading the access path for one outer row (outer holds the earlier levels' values
// its bounds may read): the equality prefix becomes the start of a key (eqKey), then each kind
// reads from there.
func (a *Access) open(env *expr.Env, outer []types.Value) (*accessIter, error) {
	ai := &accessIter{a: a, env: env, t: TxnOf(env)}
	key, nEq, none, err := a.eqKey(env, outer)
	if err != nil {
		return nil, err
	}
	if none {
		ai.done = true // col = NULL matches nothing
		return ai, nil
	}
	kind := a.Kind
	if nEq < len(a.Eq) {
		kind = AccRange
	}
	switch kind {
	case AccPoint:
		ai.onekey[0] = key
		ai.keys = ai.onekey[:]
		return ai, nil
	case AccBatch:
		return ai.openBatch(key, nEq, outer)
	case AccRanges:
		return ai.openRanges(key, nEq, outer)
	case AccRange:
		return ai.openBounds(key, nEq, outer)
	default:
		return ai.openRange(key, types.Null, types.Null, false, false, nEq)
	}
}

// eqKey evaluates the equality prefix into the index prefix: key, and nEq the values it holds. A
// value that does not convert exactly to the column type makes the rest of the key useless, so
// nEq stops short and the caller scans what the exact part allows (the filter still runs). none
// reports a NULL value: col = NULL matches nothing.
func (a *Access) eqKey(env *expr.Env, outer []types.Value) (key []byte, nEq int, none bool, err error) {
	tbl, ix := a.Tbl, a.Idx
	// Room for the prefix and a typical key, so that a point key is one allocation.
	key = rowenc.IndexPrefix(make([]byte, 0, 32), tbl.ID, ix.ID)
	for i, e := range a.Eq {
		v, err := e.Eval(env, outer)
		if err != nil {
			return nil, 0, false, err
		}
		if v.IsNull() {
			return nil, 0, true, nil
		}
		col := tbl.Columns[ix.Offsets[i]]
		kv, ok := keyValue(v, col)
		if !ok {
			break
		}
		key, _ = keyPart(key, kv, tbl, ix, i)
		nEq++
	}
	return key, nEq, false, nil
}

// openBatch reads the IN list on index column nEq after the prefix key: one point read per value
// on a full unique key, otherwise one prefix scan per value.
func (ai *accessIter) openBatch(key []byte, nEq int, outer []types.Value) (*accessIter, error) {
	a, env := ai.a, ai.env
	tbl, ix := a.Tbl, a.Idx
	if len(a.Tuples) > 0 {
		return ai.openTuples(key, outer)
	}
	col := tbl.Columns[ix.Offsets[nEq]]
	// The keys of a long IN list are built in one buffer, then sorted and deduplicated in
	// place: no allocation and no map entry per value. Their bytes count against the
	// statement's memory quota.
	arena := make([]byte, 0, len(a.In)*(len(key)+10)) // an integer key part takes 9 bytes
	ends := make([]int, 0, len(a.In))
	for _, e := range a.In {
		v, err := e.Eval(env, outer)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			continue
		}
		kv, ok := keyValue(v, col)
		if !ok {
			// Cannot build this key exactly: scan the prefix instead.
			return ai.openRange(key, types.Null, types.Null, false, false, nEq)
		}
		before := len(arena)
		arena, _ = keyPart(append(arena, key...), kv, tbl, ix, nEq)
		ends = append(ends, len(arena))
		if err := env.Grow(int64(len(arena)-before) + 32); err != nil {
			return nil, err
		}
	}
	return ai.readKeys(arena, ends, nEq+1)
}

// openTuples reads a row constructor IN list (Access.Tuples) on the index's first columns: one
// point read per tuple on a full unique key, otherwise one prefix scan per tuple. A tuple with a
// NULL matches nothing; a value that cannot be keyed exactly makes it scan the whole index (the
// filter decides).
func (ai *accessIter) openTuples(prefix []byte, outer []types.Value) (*accessIter, error) {
	a, env := ai.a, ai.env
	tbl, ix := a.Tbl, a.Idx
	width := len(a.Tuples[0])
	arena := make([]byte, 0, len(a.Tuples)*(len(prefix)+10*width))
	ends := make([]int, 0, len(a.Tuples))
tuples:
	for _, tup := range a.Tuples {
		start := len(arena)
		arena = append(arena, prefix...)
		for i, e := range tup {
			v, err := e.Eval(env, outer)
			if err != nil {
				return nil, err
			}
			if v.IsNull() {
				arena = arena[:start]
				continue tuples
			}
			kv, ok := keyValue(v, tbl.Columns[ix.Offsets[i]])
			if !ok {
				return ai.openRange(prefix, types.Null, types.Null, false, false, 0)
			}
			arena, _ = keyPart(arena, kv, tbl, ix, i)
		}
		ends = append(ends, len(arena))
		if err := env.Grow(int64(len(arena)-start) + 32); err != nil {
			return nil, err
		}
	}
	return ai.readKeys(arena, ends, width)
}

// readKeys reads the keys laid end to end in arena (ends: where each ends), each keying the
// index's first width columns, in index order (reversed for a descending read), once each.
func (ai *accessIter) readKeys(arena []byte, ends []int, width int) (*accessIter, error) {
	a, ix := ai.a, ai.a.Idx
	ai.keys = make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		ai.keys[i] = arena[start:end:end]
		start = end
	}
	slices.SortFunc(ai.keys, bytes.Compare)
	ai.keys = slices.CompactFunc(ai.keys, bytes.Equal)
	if a.Reverse {
		for i, j := 0, len(ai.keys)-1; i < j; i, j = i+1, j-1 {
			ai.keys[i], ai.keys[j] = ai.keys[j], ai.keys[i]
		}
	}
	if !(ix.Primary || ix.Unique) || width < len(ix.Offsets) {
		// Not a full unique key: each value is a prefix to scan.
		for _, k := range ai.keys {
			ai.spans = append(ai.spans, [2][]byte{k, PrefixEnd(k)})
		}
		ai.keys = nil
		return ai, ai.nextSpan()
	}
	return ai, nil
}

// openBounds reads the range on index column nEq after the prefix key; a NULL bound matches
// nothing. When the prefix stopped short of the equality columns (eqKey), the range is not
// applied: the prefix alone is scanned.
func (ai *accessIter) openBounds(key []byte, nEq int, outer []types.Value) (*accessIter, error) {
	a, env := ai.a, ai.env
	var lo, hi types.Value
	if nEq == len(a.Eq) && a.Lo != nil {
		v, err := a.Lo.Eval(env, outer)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			ai.done = true
			return ai, nil
		}
		lo = v
	}
	if nEq == len(a.Eq) && a.Hi != nil {
		v, err := a.Hi.Eval(env, outer)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			ai.done = true
			return ai, nil
		}
		hi = v
	}
	return ai.openRange(key, lo, hi, a.LoIncl, a.HiIncl, nEq)
}

// openRange scans prefix + [lo, hi] on index column nEq. Bounds that do not convert exactly are
// widened (the residual filter decides).
func (ai *accessIter) openRange(prefix []byte, lo, hi types.Value, loIncl, hiIncl bool, nEq int) (*accessIter, error) {
	a := ai.a
	lower := append([]byte(nil), prefix...)
	upper := PrefixEnd(prefix)
	if nEq < len(a.Idx.Offsets) {
		col := a.Tbl.Columns[a.Idx.Offsets[nEq]]
		loExact, hiExact := false, false
		if !lo.IsNull() {
			if kv, ok := keyValue(lo, col); ok {
				var cut bool
				lower, cut = keyPart(append([]byte(nil), prefix...), kv, a.Tbl, a.Idx, nEq)
				if !loIncl && !cut {
					lower = PrefixEnd(lower)
				}
				loExact = !cut && isIntKind(lo) && isIntKind(kv)
			}
		} else if !hi.IsNull() {
			// col < x excludes NULLs, which sort first (marker 0x00).
			lower = append(append([]byte(nil), prefix...), 0x01)
		}
		if !hi.IsNull() {
			if kv, ok := keyValue(hi, col); ok {
				var cut bool
				upper, cut = keyPart(append([]byte(nil), prefix...), kv, a.Tbl, a.Idx, nEq)
				if hiIncl || cut {
					upper = PrefixEnd(upper)
				}
				hiExact = !cut && isIntKind(hi) && isIntKind(kv)
			}
		}
		// Only openBounds passes the access's own bounds, and only with the whole equality
		// prefix keyed (nEq == len(a.Eq)); the other callers pass none.
		ai.exact = loExact && hiExact && nEq == len(a.Eq)
	}
	if bytes.Compare(lower, upper) >= 0 {
		ai.done = true
		return ai, nil
	}
	it, err := ai.t.NewIter(lower, upper, a.Reverse, a.Latest)
	if err != nil {
		return nil, err
	}
	ai.it = it
	return ai, nil
}

// openRanges scans the union of the OR-ed ranges on index column nEq, after the equality prefix.
// Ranges are merged where they overlap, so no row is returned twice.
func (ai *accessIter) openRanges(prefix []byte, nEq int, outer []types.Value) (*accessIter, error) {
	a := ai.a
	if nEq < len(a.Eq) || nEq >= len(a.Idx.Offsets) {
		return ai.openRange(prefix, types.Null, types.Null, false, false, nEq)
	}
	col := a.Tbl.Columns[a.Idx.Offsets[nEq]]
	// exact until a bound is not an integer keyed as itself (openRange's rule, for every range).
	exact := true
	var spans [][2][]byte
	for _, r := range a.Ors {
		lower := append(append([]byte(nil), prefix...), 0x01) // non-NULL values
		upper := PrefixEnd(prefix)
		empty := false
		bound := func(e expr.Expr, incl, isLo bool) bool {
			v, err := e.Eval(ai.env, outer)
			if err != nil || v.IsNull() {
				empty = true
				return err == nil
			}
			kv, ok := keyValue(v, col)
			if !ok {
				return false // cannot bound exactly: scan the whole prefix
			}
			k, cut := keyPart(append([]byte(nil), prefix...), kv, a.Tbl, a.Idx, nEq)
			exact = exact && !cut && isIntKind(v) && isIntKind(kv)
			if isLo {
				lower = k
				if !incl && !cut {
					lower = PrefixEnd(k)
				}
			} else {
				upper = k
				if incl || cut {
					upper = PrefixEnd(k)
				}
			}
			return true
		}
		if r.Lo != nil && !bound(r.Lo, r.LoIncl, true) || r.Hi != nil && !bound(r.Hi, r.HiIncl, false) {
			return ai.openRange(prefix, types.Null, types.Null, false, false, nEq)
		}
		if !empty && bytes.Compare(lower, upper) < 0 {
			spans = append(spans, [2][]byte{lower, upper})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return bytes.Compare(spans[i][0], spans[j][0]) < 0 })
	var merged [][2][]byte
	for _, sp := range spans {
		if n := len(merged); n > 0 && bytes.Compare(sp[0], merged[n-1][1]) <= 0 {
			if bytes.Compare(sp[1], merged[n-1][1]) > 0 {
				merged[n-1][1] = sp[1]
			}
			continue
		}
		merged = append(merged, sp)
	}
	if a.Reverse {
		for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
			merged[i], merged[j] = merged[j], merged[i]
		}
	}
	ai.spans = merged
	ai.exact = exact
	if len(merged) == 0 {
		ai.done = true
		return ai, nil
	}
	return ai, ai.nextSpan()
}

func isIntKind(v types.Value) bool { return v.K == types.KindInt || v.K == types.KindUint }

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return append(end, 0xff) // unreachable for our keys, which start below 0xff
}

// keyValue converts v to col's type for an equality key, reporting false if the conversion is not
// exact (then no key equality can stand for the SQL comparison).
func keyValue(v types.Value, col *catalog.Column) (types.Value, bool) {
	out, warns, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: true})
	if err != nil || len(warns) > 0 {
		return types.Null, false
	}
	if types.Compare(out, v, nil) != 0 && !(expr.IsStringType(col.Type) && (v.K == types.KindString || v.K == types.KindBytes)) {
		return types.Null, false
	}
	if expr.IsStringType(col.Type) && v.K != types.KindString && v.K != types.KindBytes {
		// A number compared with a string column compares as numbers: '1.0' = 1.
		return types.Null, false
	}
	return out, true
}

// Next returns the next row of the table (all columns; for covering reads only the index's columns).
func (ai *accessIter) Next() ([]types.Value, error) {
	for !ai.done {
		if err := ai.env.CheckKilled(); err != nil {
			return nil, err
		}
		if ai.it == nil {
			if len(ai.keys) == 0 {
				ai.done = true
				break
			}
			k := ai.keys[0]
			ai.keys = ai.keys[1:]
			row, ok, err := ai.pointRead(k)
			if err != nil {
				return nil, err
			}
			if ok {
				return row, nil
			}
			continue
		}
		if !ai.it.Valid() {
			if err := ai.it.Err(); err != nil {
				return nil, err
			}
			if len(ai.spans) > 0 {
				if err := ai.nextSpan(); err != nil {
					return nil, err
				}
				continue
			}
			ai.done = true
			break
		}
		k, v := ai.it.Key(), ai.it.Value()
		row, ok, err := ai.entryRow(k, v, true)
		ai.it.Next()
		if err != nil {
			return nil, err
		}
		if ok {
			return row, nil
		}
	}
	return nil, nil
}

// nextSpan opens the scan of the next key range.
func (ai *accessIter) nextSpan() error {
	if ai.it != nil {
		_ = ai.it.Close()
		ai.it = nil
	}
	for len(ai.spans) > 0 {
		sp := ai.spans[0]
		ai.spans = ai.spans[1:]
		it, err := ai.t.NewIter(sp[0], sp[1], ai.a.Reverse, ai.a.Latest)
		if err != nil {
			return err
		}
		ai.it = it
		return nil
	}
	ai.done = true
	return nil
}

// pointRead reads one key of a unique index.
func (ai *accessIter) pointRead(k []byte) ([]types.Value, bool, error) {
	a := ai.a
	if a.Idx.Primary {
		if a.Lock != 0 {
			// Lock first, also when the row does not exist: a later insert of this key waits.
			if err := ai.lock(k); err != nil {
				return nil, false, err
			}
			return ai.readPK(k, true)
		}
		return ai.readPK(k, a.Latest)
	}
	if a.Lock != 0 {
		if err := ai.lock(k); err != nil {
			return nil, false, err
		}
	}
	var v []byte
	var ok bool
	var err error
	if a.Latest || a.Lock != 0 {
		v, ok, err = ai.t.GetLatest(k)
	} else {
		v, ok, err = ai.t.Get(k)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	return ai.entryRow(k, v, false)
}

// entryRow turns an index entry into a row: a primary entry is the row; a secondary entry holds the
// index and primary key columns, enough for covering reads, else the row is fetched by primary key.
//
// scanned: k and v are the entry ai.it is on (a scan), not a point read's.
func (ai *accessIter) entryRow(k, v []byte, scanned bool) ([]types.Value, bool, error) {
	a := ai.a
	tbl := a.Tbl
	if a.Idx.Primary {
		if a.Lock != 0 {
			// k stays valid while the lock is awaited: the scan does not move meanwhile.
			if err := ai.lock(k); err != nil {
				return nil, false, err
			}
			if !scanned || !ai.it.Fresh() {
				return ai.readPK(k, true)
			}
			// The scan's entry is still the latest version (txn.Iterator.Fresh): decode it.
		}
		row, err := ai.decode(v)
		if err != nil {
			return nil, false, fmt.Errorf("table %s: key %x: %w", tbl.Name, k, err)
		}
		return row, true, nil
	}
	// The entry holds the index's and the primary key's columns. A covering read returns them as
	// the row; any other read only builds the primary key from them, in scratch space reused for
	// every entry (the lock table and the reads copy or drop the key).
	var part []types.Value
	var ar *rowenc.Arena
	switch {
	case a.Covering && a.Lock == 0 && ai.reuse:
		if ai.one == nil {
			ai.one = make([]types.Value, len(tbl.Columns))
		}
		part, ar = ai.one, &ai.strs
		if !ai.keepStrs {
			ar.Reset()
		}
	case a.Covering && a.Lock == 0 && ai.perRow:
		part = make([]types.Value, len(tbl.Columns))
	case a.Covering && a.Lock == 0:
		part, ar = ai.rows.get(len(tbl.Columns)), &ai.strs
	default:
		if ai.entry == nil {
			ai.entry = make([]types.Value, len(tbl.Columns))
		}
		part, ar = ai.entry, &ai.entryStrs
		ar.Reset()
	}
	if err := rowenc.DecodeRowArena(v, tbl.ColPos, part, ar); err != nil {
		return nil, false, fmt.Errorf("index %s.%s: key %x: %w", tbl.Name, a.Idx.Name, k, err)
	}
	if a.Covering && a.Lock == 0 {
		return part, true, nil
	}
	ai.pk = PrimaryKey(ai.pk[:0], tbl, part)
	if a.Lock != 0 {
		if err := ai.lock(ai.pk); err != nil {
			return nil, false, err
		}
		return ai.readPK(ai.pk, true)
	}
	return ai.readPK(ai.pk, a.Latest)
}

// lock takes key's row lock in the access's mode, with innodb_lock_wait_timeout read at the
// first lock of the statement.
func (ai *accessIter) lock(key []byte) error {
	if !ai.waitSet {
		ai.wait, ai.waitSet = ai.env.Sess.(Session).LockWaitTimeout(), true
	}
	return lockRow(ai.env, key, ai.a.Lock, ai.wait)
}

func (ai *accessIter) readPK(pk []byte, latest bool) ([]types.Value, bool, error) {
	var v []byte
	var ok bool
	var err error
	if latest {
		v, ok, err = ai.t.GetLatest(pk)
	} else {
		v, ok, err = ai.t.Get(pk)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	row, err := ai.decode(v)
	if err != nil {
		return nil, false, fmt.Errorf("table %s: key %x: %w", ai.a.Tbl.Name, pk, err)
	}
	return row, true, nil
}

func (ai *accessIter) Close() {
	if ai.it != nil {
		_ = ai.it.Close()
		ai.it = nil
	}
}

// decode is DecodeRow into the iterator's row slab and string arena.
func (ai *accessIter) decode(v []byte) ([]types.Value, error) {
	tbl := ai.a.Tbl
	var row []types.Value
	var ar *rowenc.Arena
	switch {
	case ai.reuse:
		if ai.one == nil {
			ai.one = make([]types.Value, len(tbl.Columns))
		}
		row, ar = ai.one, &ai.strs
		if !ai.keepStrs {
			ar.Reset()
		}
	case ai.perRow:
		row = make([]types.Value, len(tbl.Columns))
	default:
		row, ar = ai.rows.get(len(tbl.Columns)), &ai.strs
	}
	for i, c := range tbl.Columns {
		row[i] = c.Absent
	}
	if err := rowenc.DecodeRowArena(v, ai.a.colPos(), row, ar); err != nil {
		return nil, err
	}
	return row, nil
}

// rowSlab hands out row slices carved from larger allocations. Chunks grow with the rows produced
// (1, 1, 2, 4, ... up to maxSlabRows rows), so a point read allocates one row as before and a scan
// allocates once per chunk instead of once per row. Each slice is capped at its width: appending
// to one never writes into its neighbour.
type rowSlab struct {
	buf []types.Value
	n   int // rows handed out
}

const maxSlabRows = 64

func (s *rowSlab) get(w int) []types.Value {
	if len(s.buf) < w {
		s.buf = make([]types.Value, min(max(s.n, 1), maxSlabRows)*w)
	}
	r := s.buf[:w:w]
	s.buf = s.buf[w:]
	s.n++
	return r
}

// DecodeRow decodes a stored row into a new slice in the table's column order.
func DecodeRow(tbl *catalog.Table, v []byte) ([]types.Value, error) {
	row := make([]types.Value, len(tbl.Columns))
	for i, c := range tbl.Columns {
		row[i] = c.Absent
	}
	if err := rowenc.DecodeRow(v, tbl.ColPos, row); err != nil {
		return nil, err
	}
	return row, nil
}

// PrimaryKey builds the primary-index key of a row. A nil buf gets one allocation of the key's
// estimated size (keySize).
func PrimaryKey(buf []byte, tbl *catalog.Table, row []types.Value) []byte {
	ix := tbl.Indexes[0]
	if buf == nil {
		buf = make([]byte, 0, keySize(row, ix.Offsets, nil))
	}
	buf = rowenc.IndexPrefix(buf, tbl.ID, ix.ID)
	for i, ci := range ix.Offsets {
		buf, _ = keyPart(buf, row[ci], tbl, ix, i)
	}
	return buf
}

// keyPrefixSize is IndexPrefix's length: the table prefix byte, the table id, the index id.
const keyPrefixSize = 1 + 8 + 4

// keySize estimates the length of the key of row's columns offs and more (AppendKey): a marker and
// 8 bytes for numbers and times, a string's collation key at most 3 bytes a character (weighted
// collations) plus its terminator. Key and row buffers sized up front are one allocation each
// instead of a few growths: a bulk INSERT builds several keys per row.
func keySize(row []types.Value, offs, more []int) int {
	n := keyPrefixSize
	for _, o := range [2][]int{offs, more} {
		for _, ci := range o {
			switch v := &row[ci]; v.K {
			case types.KindString, types.KindBytes:
				n += 8 + 3*len(v.S)
			case types.KindDecimal:
				n += 24
			default:
				n += 9
			}
		}
	}
	return n
}

// SecondaryKey builds a secondary index entry (key, value) for a row. Non-unique indexes, and unique
// ones whose key has a NULL (NULLs never collide), append the primary key columns to the key.
func SecondaryKey(tbl *catalog.Table, ix *catalog.Index, row []types.Value) (key, val []byte, unique bool) {
	pk := tbl.Indexes[0]
	// The value's exact size, then one allocation for both: the value at its start (its capacity
	// capped, so that it never runs into the key), the key after it. A key longer than keySize's
	// estimate moves out on its own.
	n := rowenc.RowHeaderSize
	for _, ci := range ix.ValueOffsets {
		n += rowenc.RowValueSize(&row[ci])
	}
	buf := make([]byte, n+keySize(row, ix.Offsets, pk.Offsets))
	key = rowenc.IndexPrefix(buf[n:n], tbl.ID, ix.ID)
	hasNull := false
	for i, ci := range ix.Offsets {
		if row[ci].IsNull() {
			hasNull = true
		}
		key, _ = keyPart(key, row[ci], tbl, ix, i)
	}
	unique = ix.Unique && !hasNull
	if !unique {
		for i, ci := range pk.Offsets {
			key, _ = keyPart(key, row[ci], tbl, pk, i)
		}
	}
	// The value: the index's columns, then the primary key's that the index does not hold
	// (rowenc's row encoding, read by column id).
	val = rowenc.AppendRowHeader(buf[:0:n], len(ix.ValueOffsets))
	for _, ci := range ix.ValueOffsets {
		val = rowenc.AppendRowValue(val, tbl.Columns[ci].ID, &row[ci])
	}
	return key, val, unique
}

// EncodeRow encodes a full row for the primary index. A nil buf gets one allocation of the row's
// size.
func EncodeRow(buf []byte, tbl *catalog.Table, row []types.Value) []byte {
	if buf == nil {
		n := rowenc.RowHeaderSize
		for i := range row {
			n += rowenc.RowValueSize(&row[i])
		}
		buf = make([]byte, 0, n)
	}
	return rowenc.AppendRow(buf, tbl.ColIDs, row)
}

// keyPart appends v as key part i of ix. A prefix part (KEY (c(n))) keys only the first n
// characters (bytes for binary strings) of the value, as InnoDB does: unique prefix indexes then
// refuse two values with the same prefix, and lookups find every row sharing the prefix, for the
// residual filter (which every access keeps) to decide. cut reports that the value was shortened,
// so that range bounds widen to include the whole prefix.
func keyPart(buf []byte, v types.Value, tbl *catalog.Table, ix *catalog.Index, i int) (out []byte, cut bool) {
	col := tbl.Columns[ix.Offsets[i]]
	if n := ix.Columns[i].Prefix; n > 0 && (v.K == types.KindString || v.K == types.KindBytes) {
		s := v.S
		if col.Type.IsBinaryString() || v.K == types.KindBytes {
			if len(s) > n {
				v.S, cut = s[:n], true
			}
		} else if k := charPrefixLen(s, n); k < len(s) {
			v.S, cut = s[:k], true
		}
	}
	return rowenc.AppendKey(buf, v, &col.Type), cut
}

// charPrefixLen is the byte length of s's first n characters.
func charPrefixLen(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Describe renders an access for EXPLAIN.
func (a *Access) Describe() string {
	var kind string
	switch a.Kind {
	case AccFull:
		kind = "full scan"
	case AccPoint:
		kind = "point get"
	case AccBatch:
		kind = "batch point get"
	case AccRanges:
		kind = fmt.Sprintf("multi-range scan (%d ranges)", len(a.Ors))
	case AccRange:
		kind = "range scan"
		if len(a.Eq) == 0 && a.Lo == nil && a.Hi == nil {
			kind = "index full scan"
		}
	}
	s := fmt.Sprintf("%s on %s", kind, a.Idx.Name)
	if a.Covering {
		s += " (covering)"
	}
	if a.Reverse {
		s += " (reverse)"
	}
	if a.Lock != 0 {
		s += " (locking)"
	}
	return s
}

package exec

import (
	"math"
	"sort"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Window functions (MySQL 8.0). The planner groups a query block's window function calls by their
// resolved window (PARTITION BY, ORDER BY, frame); each distinct window is one Window. windowIter
// runs after aggregation and HAVING and before the projection: it materialises the block's rows
// (counted against the statement's memory quota), and for each Window sorts them once by partition
// and order keys and computes that window's functions into the row's trailing columns
// (Select.WinBase + WinFn.Slot), which the projection and the final ORDER BY read as columns. The
// rows leave in the order of the last window's sort, as MySQL's do when the query has no ORDER BY.

// BoundKind is one end of a window frame.
type BoundKind uint8

const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is a frame's start or end; N is the offset of N PRECEDING / N FOLLOWING.
type FrameBound struct {
	Kind BoundKind
	N    expr.Expr
	Unit string // INTERVAL N <Unit> (upper case; RANGE over a temporal key), else ""
}

// Frame is a window's explicit frame (ROWS or RANGE).
type Frame struct {
	Range      bool
	Start, End FrameBound
}

// WinFn is one window function call of a Window.
type WinFn struct {
	Fn   string      // lower case: row_number, rank, ..., or an aggregate's name
	Args []expr.Expr // over the window's input row
	T    types.ColType
	Agg  *Agg // aggregates OVER (...): the aggregate's spec, whose Args are Args
	Slot int  // the result's column is Select.WinBase + Slot
}

// Window is one distinct window specification and the functions computed over it.
type Window struct {
	Name      string // the window's name for EXPLAIN ("<unnamed window>" when it has none)
	Partition []expr.Expr
	Order     []expr.Expr
	Desc      []bool // per Order key
	Frame     *Frame // nil: the default frame (the whole partition, or up to the last peer with ORDER BY)
	Fns       []WinFn
}

// usesFrame says whether fn reads its frame: the ranking functions and LAG/LEAD ignore it.
func usesFrame(fn string) bool {
	switch fn {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead":
		return false
	}
	return true
}

// windowIter materialises its input and computes every Window's functions over it.
type windowIter struct {
	pl     *Select
	env    *expr.Env
	src    RowIter
	rows   [][]types.Value
	i      int
	loaded bool
}

func (w *windowIter) Next() ([]types.Value, error) {
	if !w.loaded {
		w.loaded = true
		if err := w.load(); err != nil {
			return nil, err
		}
	}
	if w.i >= len(w.rows) {
		return nil, nil
	}
	r := w.rows[w.i]
	w.i++
	return r, nil
}

func (w *windowIter) Close() { w.src.Close() }

// load reads every input row into a row wide enough for the window results, then runs each window.
func (w *windowIter) load() error {
	width := w.pl.WinBase + w.pl.NWin
	for {
		r, err := w.src.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if err := w.env.CheckKilled(); err != nil {
			return err
		}
		out := make([]types.Value, width)
		copy(out, r[:min(len(r), w.pl.WinBase)])
		if err := w.env.GrowRow(out); err != nil {
			return err
		}
		w.rows = append(w.rows, out)
	}
	for _, win := range w.pl.Windows {
		if err := w.run(win); err != nil {
			return err
		}
	}
	return nil
}

// run sorts the rows by win's partition and order keys and computes its functions per partition.
func (w *windowIter) run(win *Window) error {
	keys, err := w.sortKeys(win)
	if err != nil {
		return err
	}
	nPart := len(win.Partition)
	sk := make([]SortKey, len(keys.colls))
	for i := range sk {
		sk[i] = SortKey{Idx: i, Desc: i >= nPart && win.Desc[i-nPart]}
	}
	perm := make([]int, len(w.rows))
	for i := range perm {
		perm[i] = i
	}
	err = w.env.SortCancellable(func() {
		sort.SliceStable(perm, func(a, b int) bool {
			w.env.SortTick()
			return compareRows(keys.vals[perm[a]], keys.vals[perm[b]], sk, keys.colls) < 0
		})
	})
	if err != nil {
		return err
	}
	rows := make([][]types.Value, len(perm))
	kv := make([][]types.Value, len(perm))
	for i, p := range perm {
		rows[i], kv[i] = w.rows[p], keys.vals[p]
	}
	w.rows = rows
	// The partition's keys are the order keys alone (their first nPart columns cut off below).
	osk := make([]SortKey, len(win.Order))
	for i, d := range win.Desc {
		osk[i] = SortKey{Idx: i, Desc: d}
	}
	part := &partition{env: w.env, win: win, colls: keys.colls[nPart:], sk: osk}
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && compareRows(kv[start], kv[end], sk[:nPart], keys.colls) == 0 {
			end++
		}
		part.rows, part.keys = rows[start:end], kv[start:end]
		for i := range part.keys {
			part.keys[i] = part.keys[i][nPart:]
		}
		if err := part.compute(w.pl.WinBase); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// windowKeys is each row's partition and order key values, and their collations.
type windowKeys struct {
	vals  [][]types.Value
	colls []*types.Collation
}

// sortKeys evaluates each row's partition and order keys once (counted against the quota).
func (w *windowIter) sortKeys(win *Window) (windowKeys, error) {
	exprs := append(append([]expr.Expr(nil), win.Partition...), win.Order...)
	k := windowKeys{colls: make([]*types.Collation, len(exprs)), vals: make([][]types.Value, len(w.rows))}
	for i, e := range exprs {
		if t := e.Type(); expr.IsStringType(t) && t.Collation != "" {
			k.colls[i], _ = types.LookupCollation(t.Collation)
		}
	}
	for ri, r := range w.rows {
		if err := w.env.CheckKilled(); err != nil {
			return k, err
		}
		vals := make([]types.Value, len(exprs))
		for i, e := range exprs {
			v, err := e.Eval(w.env, r)
			if err != nil {
				return k, err
			}
			vals[i] = v
		}
		if err := w.env.GrowRow(vals); err != nil {
			return k, err
		}
		k.vals[ri] = vals
	}
	return k, nil
}

// partition is one partition of a window, its rows sorted by the window's ORDER BY.
type partition struct {
	env   *expr.Env
	win   *Window
	rows  [][]types.Value
	keys  [][]types.Value // the order keys of each row
	colls []*types.Collation
	sk    []SortKey
	// peer groups: rows peerStart[i]..peerEnd[i]-1 have row i's order keys (all rows without ORDER BY)
	peerStart, peerEnd []int
}

// compute fills every function's column of the partition's rows.
func (p *partition) compute(base int) error {
	p.peers()
	for fi := range p.win.Fns {
		fn := &p.win.Fns[fi]
		col := base + fn.Slot
		var err error
		switch fn.Fn {
		case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
			p.ranking(fn.Fn, col)
		case "ntile":
			err = p.ntile(fn, col)
		case "lag", "lead":
			err = p.lagLead(fn, col)
		case "first_value", "last_value", "nth_value":
			err = p.nthValue(fn, col)
		default:
			err = p.aggregate(fn, col)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// peers finds each row's peer group (equal order keys).
func (p *partition) peers() {
	n := len(p.rows)
	p.peerStart, p.peerEnd = make([]int, n), make([]int, n)
	for s := 0; s < n; {
		e := s + 1
		for e < n && compareRows(p.keys[s], p.keys[e], p.sk, p.colls) == 0 {
			e++
		}
		for i := s; i < e; i++ {
			p.peerStart[i], p.peerEnd[i] = s, e
		}
		s = e
	}
}

// ranking computes ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK and CUME_DIST.
func (p *partition) ranking(fn string, col int) {
	n := len(p.rows)
	dense := int64(0)
	for i, r := range p.rows {
		if p.peerStart[i] == i {
			dense++
		}
		rank := int64(p.peerStart[i] + 1)
		switch fn {
		case "row_number":
			r[col] = types.NewInt(int64(i + 1))
		case "rank":
			r[col] = types.NewInt(rank)
		case "dense_rank":
			r[col] = types.NewInt(dense)
		case "percent_rank":
			f := 0.0
			if n > 1 {
				f = float64(rank-1) / float64(n-1)
			}
			r[col] = types.NewFloat(f)
		case "cume_dist":
			r[col] = types.NewFloat(float64(p.peerEnd[i]) / float64(n))
		}
	}
}

// constArg evaluates a function's constant argument (NTILE's buckets, LAG's offset, NTH_VALUE's
// N) as a non-negative integer (positive unless zeroOK); anything else is error 1210, as MySQL.
func (p *partition) constArg(fn *WinFn, e expr.Expr, zeroOK bool) (int64, error) {
	v, err := e.Eval(p.env, p.rows[0])
	if err != nil {
		return 0, err
	}
	n := types.ToIntLenient(v)
	if v.IsNull() || v.K == types.KindFloat || n < 0 || n == 0 && !zeroOK {
		return 0, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to %s", fn.Fn)
	}
	return n, nil
}

// ntile splits the partition into N buckets whose sizes differ by at most one, larger first.
func (p *partition) ntile(fn *WinFn, col int) error {
	buckets, err := p.constArg(fn, fn.Args[0], false)
	if err != nil {
		return err
	}
	n := int64(len(p.rows))
	size, extra := n/buckets, n%buckets
	for i, r := range p.rows {
		// The first extra buckets hold size+1 rows.
		idx := int64(i)
		var b int64
		if big := extra * (size + 1); idx < big {
			b = idx/(size+1) + 1
		} else {
			b = extra + (idx-big)/max(size, 1) + 1
		}
		r[col] = types.NewInt(b)
	}
	return nil
}

// lagLead reads the row offset rows before (LAG) or after (LEAD), or the default (NULL).
func (p *partition) lagLead(fn *WinFn, col int) error {
	off := int64(1)
	if len(fn.Args) > 1 {
		var err error
		if off, err = p.constArg(fn, fn.Args[1], true); err != nil {
			return err
		}
	}
	if fn.Fn == "lag" {
		off = -off
	}
	for i, r := range p.rows {
		j := int64(i) + off
		var v types.Value
		var err error
		switch {
		case j >= 0 && j < int64(len(p.rows)):
			v, err = fn.Args[0].Eval(p.env, p.rows[j])
		case len(fn.Args) > 2:
			v, err = fn.Args[2].Eval(p.env, r)
		default:
			v = types.Null
		}
		if err != nil {
			return err
		}
		if len(fn.Args) > 2 { // the value and the default share one type (UnifyTypes)
			v = expr.CoerceTo(v, fn.T)
		}
		r[col] = v
	}
	return nil
}

// nthValue is FIRST_VALUE, LAST_VALUE and NTH_VALUE over each row's frame.
func (p *partition) nthValue(fn *WinFn, col int) error {
	nth := int64(1)
	if fn.Fn == "nth_value" {
		var err error
		if nth, err = p.constArg(fn, fn.Args[1], false); err != nil {
			return err
		}
	}
	for i, r := range p.rows {
		lo, hi, err := p.frame(i)
		if err != nil {
			return err
		}
		j := lo + int(nth) - 1
		if fn.Fn == "last_value" {
			j = hi - 1
		}
		v := types.Null
		if j >= lo && j < hi {
			if v, err = fn.Args[0].Eval(p.env, p.rows[j]); err != nil {
				return err
			}
		}
		r[col] = v
	}
	return nil
}

// aggregate computes an aggregate over each row's frame. While the frame's start stays put and its
// end only grows (the default frame, UNBOUNDED PRECEDING) the state is extended row by row;
// otherwise it is computed again for the row's frame.
func (p *partition) aggregate(fn *WinFn, col int) error {
	ai := &aggIter{env: p.env}
	var st aggState
	clo, chi := 0, 0
	for i, r := range p.rows {
		if err := p.env.CheckKilled(); err != nil {
			return err
		}
		lo, hi, err := p.frame(i)
		if err != nil {
			return err
		}
		if lo > clo && lo <= chi && hi >= chi && removable(fn.Agg, &st) {
			// A sliding frame: take the rows that left it out instead of starting again.
			for ; clo < lo; clo++ {
				if err := ai.remove(fn.Agg, &st, p.rows[clo]); err != nil {
					return err
				}
			}
		}
		if lo != clo || hi < chi {
			st, clo, chi = aggState{}, lo, lo
		}
		for ; chi < hi; chi++ {
			if err := ai.accumulate(fn.Agg, &st, p.rows[chi]); err != nil {
				return err
			}
		}
		r[col] = ai.finalize(fn.Agg, &st)
	}
	return nil
}

// removable says whether a row can be taken out of st exactly: COUNT, and SUM/AVG while their
// sum is exact (a DOUBLE sum would drift).
func removable(spec *Agg, st *aggState) bool {
	switch spec.Fn {
	case "count":
		return true
	case "sum", "avg":
		return !st.isFloat
	}
	return false
}

// remove takes one row out of a COUNT, SUM or AVG state (the inverse of accumulate).
func (a *aggIter) remove(spec *Agg, st *aggState, r []types.Value) error {
	if spec.Star {
		st.count--
		return nil
	}
	vals := make([]types.Value, len(spec.Args))
	for i, e := range spec.Args {
		v, err := e.Eval(a.env, r)
		if err != nil {
			return err
		}
		if v.IsNull() {
			return nil // it was never counted
		}
		vals[i] = v
	}
	st.count--
	if spec.Fn != "count" {
		st.sum = types.NewDecimal(types.ToDecimal(st.sum).Sub(types.ToDecimal(vals[0])), 0)
	}
	return nil
}

// frame is row i's frame [lo, hi) within the partition (empty when lo >= hi).
func (p *partition) frame(i int) (lo, hi int, err error) {
	n := len(p.rows)
	f := p.win.Frame
	if f == nil {
		if len(p.win.Order) == 0 {
			return 0, n, nil
		}
		return 0, p.peerEnd[i], nil
	}
	if lo, err = p.bound(i, f, f.Start, true); err != nil {
		return 0, 0, err
	}
	if hi, err = p.bound(i, f, f.End, false); err != nil {
		return 0, 0, err
	}
	lo, hi = max(0, min(lo, n)), max(0, min(hi, n))
	if lo > hi {
		hi = lo
	}
	return lo, hi, nil
}

// bound is the index a frame bound puts row i's frame start at (or its end after, exclusive).
func (p *partition) bound(i int, f *Frame, b FrameBound, start bool) (int, error) {
	switch b.Kind {
	case UnboundedPreceding:
		return 0, nil
	case UnboundedFollowing:
		return len(p.rows), nil
	case CurrentRow:
		switch {
		case f.Range && start:
			return p.peerStart[i], nil
		case f.Range:
			return p.peerEnd[i], nil
		case start:
			return i, nil
		}
		return i + 1, nil
	}
	if f.Range {
		return p.rangeBound(i, b, start)
	}
	v, err := p.offset(b, true)
	if err != nil {
		return 0, err
	}
	n := types.ToIntLenient(v)
	if n < 0 { // a BIGINT UNSIGNED beyond int64
		n = math.MaxInt64
	}
	off := int(min(n, int64(len(p.rows))+1))
	if b.Kind == Preceding {
		off = -off
	}
	if start {
		return i + off, nil
	}
	return i + off + 1, nil
}

// rangeBound is a RANGE frame's N PRECEDING / N FOLLOWING bound: the first row whose (single,
// numeric) order key is at least (for a start) or beyond (for an end) the current row's key moved
// by N in the bound's direction. NULL keys are peers of each other and sort first ascending, last
// descending; a NULL current row's bound is its peer group's.
func (p *partition) rangeBound(i int, b FrameBound, start bool) (int, error) {
	cur := p.keys[i][0]
	if cur.IsNull() {
		if start {
			return p.peerStart[i], nil
		}
		return p.peerEnd[i], nil
	}
	nv, err := p.offset(b, false)
	if err != nil {
		return 0, err
	}
	desc := p.win.Desc[0]
	smaller := b.Kind == Preceding != desc // preceding ascending, following descending
	var target types.Value
	if b.Unit != "" {
		if target, err = expr.AddInterval(cur, nv, b.Unit, smaller); err != nil {
			return 0, err
		}
	} else {
		off := types.ToDecimal(nv)
		if smaller {
			off = off.Neg()
		}
		target = types.NewDecimal(types.ToDecimal(cur).Add(off), 0)
	}
	// before(j): row j sorts before the bound (monotone over the sorted partition).
	before := func(j int) bool {
		k := p.keys[j][0]
		if k.IsNull() {
			return !desc
		}
		var c int
		if b.Unit != "" {
			c = types.Compare(k, target, nil)
		} else {
			c = types.ToDecimal(k).Cmp(types.ToDecimal(target))
		}
		if desc {
			c = -c
		}
		if start {
			return c < 0
		}
		return c <= 0
	}
	return sort.Search(len(p.rows), func(j int) bool { return !before(j) }), nil
}

// offset evaluates a frame bound's N (a constant, or a placeholder bound per execution): a ROWS
// offset must be a non-negative integer, a RANGE offset a non-negative number (error 3586).
func (p *partition) offset(b FrameBound, rows bool) (types.Value, error) {
	v, err := b.N.Eval(p.env, nil)
	if err != nil {
		return v, err
	}
	bad := v.IsNull()
	switch {
	case b.Unit != "": // an interval's amount may be a string ('2:30' MINUTE_SECOND)
	case v.K == types.KindInt:
		bad = bad || v.I < 0
	case v.K == types.KindUint:
	case v.K == types.KindDecimal || v.K == types.KindFloat:
		bad = bad || rows || types.ToDecimal(v).IsNegative()
	default:
		d := types.ToDecimal(v)
		bad = bad || d.IsNegative() || rows && !d.IsInteger()
	}
	if bad {
		return v, sqlerr.New(sqlerr.ErrWindowFrameIllegal, "Window '%s': frame start or end is negative, NULL or of non-integral type", p.win.Name)
	}
	return v, nil
}

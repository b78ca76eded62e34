package sql

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sqltext"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// The plan cache for text statements (issue 12): applications that send literals in the text
// protocol (PHP, Python, Ruby; sysbench --db-ps-mode=disable) repeat a few statement shapes with
// other values. A statement whose text differs from a cached one only in its literals runs on
// the cached statement's parse and plan, its literals bound as parameters, exactly as a server-
// side prepared statement runs (prepared.go: metadata and table locks taken again, planned again
// when the catalog changed). What is cached per session:
//  1. sqltext.Normalize decides from the text alone whether it may be cached and gives its key
//     (the text with ? for each literal, and the literals' kinds) and its literals.
//  2. The first time a key is met, the statement runs as always, and beside it the key is
//     learned: its parameter text is parsed; the key is refused (remembered as not cacheable)
//     when a parameter would change the meaning — a literal in a select list (it names the
//     column), in GROUP BY or ORDER BY (a position), as a LIKE pattern (its prefix may choose
//     an index), or anywhere the parse with ? differs from the literal one (the literals decoded
//     by the lexer must equal the parser's); for a SELECT, when the plan with parameters differs
//     from the plan with the literals (access paths as EXPLAIN shows them, result columns).
//  3. Later texts with the key run the cached statement with their literals as arguments.
//
// The cache is bounded by kiln_plan_cache_size entries per session (oldest out first), dropped
// when sql_mode or collation_connection change (they change lexing and planning), and its
// entries are invalidated by DDL as prepared statements are (the catalog version).

type planCacheKey struct{ text, db string }

type planCache struct {
	entries       map[planCacheKey]*prepared // nil: the key is known not to be cacheable
	order         []planCacheKey             // insertion order, for eviction
	weight        int                        // of the entries (entryWeight), at most maxCacheWeight
	sqlMode, coll string                     // the settings the entries were learned under
	mode          sqltext.Mode
}

// planCacheLookup normalises text and looks it up. It returns the cached statement and its
// arguments on a hit, with the text of the statements after it in a multi-statement text (rest,
// for the caller to parse); on a miss that may be learned, the normalised text for
// planCacheLearn.
func (s *Session) planCacheLookup(text string) (p *prepared, args []types.Value, rest string, learn *sqltext.Normalized) {
	size := s.getSysVar(sysvar.PlanCacheSize, false).I
	if size <= 0 {
		return nil, nil, "", nil
	}
	c := &s.pcache
	mode, parsed := s.sqlMode()
	coll := s.getSysVar(sysvar.Must("collation_connection"), false).S
	if c.entries == nil || mode != c.sqlMode || coll != c.coll {
		*c = planCache{entries: map[planCacheKey]*prepared{}, sqlMode: mode, coll: coll, mode: sqltext.Mode{NoBackslashEscapes: parsed.HasNoBackslashEscapesMode(), ANSIQuotes: parsed.HasANSIQuotesMode()}}
	}
	n, ok := sqltext.Normalize(text, c.mode)
	if !ok {
		return nil, nil, "", nil
	}
	p, found := c.entries[planCacheKey{n.Key, s.CurDB}]
	if !found {
		s.db.planCacheMisses.Add(1)
		learn := n // only a miss puts it on the heap
		return nil, nil, "", &learn
	}
	if p == nil {
		return nil, nil, "", nil
	}
	args, ok = literalArgs(n.Lits)
	if !ok {
		return nil, nil, "", nil
	}
	s.db.planCacheHits.Add(1)
	return p, args, n.Rest, nil
}

// literalArgs turns the lexer's literals into the values the parser would give them
// (plan.DatumValue of the same datums). Integers, strings and hex literals, nearly all of a bulk
// INSERT's thousands, are built directly (the same values, without a datum and a copy of the
// bytes each).
func literalArgs(lits []sqltext.Literal) ([]types.Value, bool) {
	args := make([]types.Value, len(lits))
	for i, l := range lits {
		var d driver.Datum
		switch l.Kind {
		case sqltext.Int:
			n, err := strconv.ParseInt(l.Text, 10, 64)
			if err != nil {
				return nil, false
			}
			args[i] = types.NewInt(n)
			continue
		case sqltext.String:
			args[i] = types.NewString(l.Text)
			continue
		case sqltext.Hex:
			args[i] = types.NewBytes(l.Text)
			continue
		case sqltext.Decimal:
			if u, err := strconv.ParseUint(l.Text, 10, 64); err == nil {
				d.SetUint64(u) // an integer beyond int64, as the parser reads it
				break
			}
			dec := new(driver.MyDecimal)
			if err := dec.FromString([]byte(l.Text)); err != nil {
				return nil, false
			}
			d.SetMysqlDecimal(dec)
		case sqltext.Float:
			f, err := strconv.ParseFloat(l.Text, 64)
			if err != nil {
				return nil, false
			}
			d.SetFloat64(f)
		default:
			return nil, false
		}
		args[i] = plan.DatumValue(&d)
	}
	return args, true
}

// planCacheLearn decides whether n's key may be cached, given orig, the statement parsed from
// the literal text (which runs as always right after), and stores the verdict.
func (s *Session) planCacheLearn(n *sqltext.Normalized, orig ast.StmtNode) {
	p := s.planCacheEntry(n, orig)
	c := &s.pcache
	size := int(s.getSysVar(sysvar.PlanCacheSize, false).I)
	key := planCacheKey{n.Key, s.CurDB}
	w := entryWeight(key, p)
	if w > maxCacheWeight {
		p, w = nil, entryWeight(key, nil) // too large to keep: remembered as not cacheable
	}
	c.entries[key] = p
	c.order = append(c.order, key)
	c.weight += w
	for len(c.order) > size || c.weight > maxCacheWeight {
		old := c.order[0]
		c.order = c.order[1:]
		c.weight -= entryWeight(old, c.entries[old])
		delete(c.entries, old)
	}
}

// maxCacheWeight bounds a session's cache beside kiln_plan_cache_size: about one parameter or
// 64 bytes of key per unit (a syntax tree's parameter and the value node around it take a few
// hundred bytes), so a session holds a few MB at most however large its INSERTs are.
const maxCacheWeight = 32768

func entryWeight(k planCacheKey, p *prepared) int {
	w := 1 + len(k.text)/64
	if p != nil {
		w += p.nParams
	}
	return w
}

// planCacheEntry builds the cached statement for n, or nil when n may not be cached.
func (s *Session) planCacheEntry(n *sqltext.Normalized, orig ast.StmtNode) *prepared {
	switch x := orig.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		if selectInto(x.(ast.ResultSetNode)) != nil {
			return nil
		}
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
	default:
		return nil
	}
	stmts, err := s.parse(n.Param)
	if err != nil || len(stmts) != 1 {
		return nil
	}
	st := stmts[0]
	if numberParams(st) != len(n.Lits) || !paramsKeepMeaning(st) || isVirtualDB(s.CurDB) {
		return nil
	}
	args, ok := literalArgs(n.Lits)
	if !ok || !sameLiterals(args, orig) {
		return nil
	}
	p := &prepared{stmt: st, nParams: len(n.Lits)}
	rs, isQuery := st.(ast.ResultSetNode)
	if !isQuery {
		return p
	}
	// Planned without metadata locks (learning must not wait for them): before each run the
	// entry's locks are taken and its plan is made again if the catalog moved (preparedPlan).
	pl, uses, err := s.planUnlocked(rs)
	if err != nil {
		return nil
	}
	lit, _, err := s.planUnlocked(orig.(ast.ResultSetNode))
	if err != nil || !samePlan(pl, lit) {
		return nil
	}
	p.plan, p.planVer, p.planDB, p.tables = pl, uses.Cat.Version, s.CurDB, uses.Tables
	return p
}

// planUnlocked plans rs against the current catalog without taking its metadata locks.
func (s *Session) planUnlocked(rs ast.ResultSetNode) (*exec.Select, *plan.Uses, error) {
	u := &plan.Uses{}
	pp := &plan.Planner{Ctx: s.planContext(), Uses: u}
	var pl *exec.Select
	err := plan.Resolve(pp.Ctx, u, func([]plan.TableUse) error { return nil }, func() (err error) {
		pl, err = pp.PlanResultSet(rs, nil)
		return err
	})
	return pl, u, err
}

// paramsKeepMeaning reports a statement none of whose parameters stands where a literal means
// more than its value (see the comment at the top of this file).
func paramsKeepMeaning(st ast.StmtNode) bool {
	v := &meaningCheck{ok: true}
	st.Accept(v)
	return v.ok
}

type meaningCheck struct {
	ok    bool
	inner int // > 0 inside a part where a parameter is refused
}

func (v *meaningCheck) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableName:
		if isVirtualDB(x.Schema.O) {
			v.ok = false // information_schema & co.: their rows are the session's, built per plan
		}
	case *ast.FieldList, *ast.GroupByClause, *ast.OrderByClause:
		v.inner++
	case *ast.PatternLikeOrIlikeExpr:
		if _, ok := x.Pattern.(*driver.ParamMarkerExpr); ok {
			v.ok = false
		}
	case *driver.ParamMarkerExpr:
		if v.inner > 0 {
			v.ok = false
		}
	}
	return n, !v.ok
}

func (v *meaningCheck) Leave(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.FieldList, *ast.GroupByClause, *ast.OrderByClause:
		v.inner--
	}
	return n, true
}

// sameLiterals reports whether args are the values of orig's literals (as multisets: the walk
// order of a syntax tree need not be the text's).
func sameLiterals(args []types.Value, orig ast.StmtNode) bool {
	v := &literalCollector{}
	orig.Accept(v)
	if len(v.vals) != len(args) {
		return false
	}
	// Nearly always the walk order is the text's (a many-row INSERT's thousands of values):
	// compared in order, without building a string per literal.
	inOrder := true
	for i := range args {
		if !sameLiteral(args[i], v.vals[i]) {
			inOrder = false
			break
		}
	}
	if inOrder {
		return true
	}
	a := make([]string, len(args))
	b := make([]string, len(args))
	for i := range args {
		a[i], b[i] = literalClass(args[i]), literalClass(v.vals[i])
	}
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// literalClass is a literal's value for sameLiterals: numbers compare by value and kind of
// number, except that the parser's uint64 for a small integer (LIMIT's count) equals an int64.
func literalClass(v types.Value) string {
	k := v.K
	if k == types.KindUint && v.I >= 0 {
		k = types.KindInt
	}
	return fmt.Sprintf("%d:%q", k, types.ToString(v))
}

// sameLiteral is literalClass(a) == literalClass(b), without the strings for the common kinds.
func sameLiteral(a, b types.Value) bool {
	ka, kb := a.K, b.K
	if ka == types.KindUint && a.I >= 0 {
		ka = types.KindInt
	}
	if kb == types.KindUint && b.I >= 0 {
		kb = types.KindInt
	}
	if ka != kb {
		return false
	}
	switch ka {
	case types.KindInt, types.KindUint:
		return a.I == b.I
	case types.KindString, types.KindBytes:
		return a.S == b.S
	}
	return literalClass(a) == literalClass(b)
}

type literalCollector struct{ vals []types.Value }

func (v *literalCollector) Enter(n ast.Node) (ast.Node, bool) {
	if x, ok := n.(*driver.ValueExpr); ok && x.Datum.Kind() != driver.KindNull {
		v.vals = append(v.vals, plan.DatumValue(&x.Datum))
	}
	return n, false
}
func (v *literalCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// samePlan reports whether two plans of one statement read the same way and return the same
// columns: EXPLAIN's rows and the result set's column definitions agree.
func samePlan(a, b *exec.Select) bool {
	if a == nil || b == nil {
		return false
	}
	if fmt.Sprint(explainRows(a, 1)) != fmt.Sprint(explainRows(b, 1)) {
		return false
	}
	return sameColumns(a.Cols[:a.NVisible], b.Cols[:b.NVisible])
}

func sameColumns(a, b []proto.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if fmt.Sprintf("%+v", a[i]) != fmt.Sprintf("%+v", b[i]) {
			return false
		}
	}
	return true
}

// execCached runs a cached statement for a text query: as Exec runs the statement parsed from
// text, with the literals as arguments and the cached plan (planQuery consults s.cachedStmt).
// more says that statements of the same text follow it.
func (s *Session) execCached(ctx context.Context, p *prepared, args []types.Value, text string, w proto.ResultWriter, more bool) error {
	s.cachedStmt, s.cachedText = p, text
	defer func() { s.cachedStmt, s.cachedText = nil, "" }()
	return s.Exec(ctx, p.stmt, args, w, more)
}

// parseRest parses the statements that follow a cached first statement in a multi-statement
// text, before the first one runs, as the whole text is parsed before any of it runs. ok is false
// when the whole text must go the usual way instead: a client without CLIENT_MULTI_STATEMENTS
// (1064), a syntax error (reported as for the whole text) or nothing to run.
func (s *Session) parseRest(rest string) (stmts []ast.StmtNode, ok bool) {
	if s.SingleStatement {
		return nil, false
	}
	stmts, err := s.parse(rest)
	if err != nil || len(stmts) == 0 {
		return nil, false
	}
	// The parser reuses the slice it returns, and the first statement's run may parse again.
	return append([]ast.StmtNode(nil), stmts...), true
}

// preparedPlan is the plan of a prepared statement or a plan-cache entry, for this run: its
// metadata and table locks taken again, then planned again if the catalog or the default database
// changed since it was planned.
func (s *Session) preparedPlan(p *prepared, rs ast.ResultSetNode) (*exec.Select, error) {
	if err := s.lockUses(p.tables); err != nil {
		return nil, err
	}
	if p.plan == nil || p.planVer != s.catalog().Version || p.planDB != s.CurDB {
		if err := s.planPrepared(p, rs); err != nil {
			return nil, err
		}
	}
	return p.plan, nil
}

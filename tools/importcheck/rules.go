package main

// The rule table: Kiln's layers from the top down, each with the layers its packages may import.
// It is the one place the intended import order is written in code; docs/architecture.md shows the
// same table (`go run ./tools/importcheck -table` prints it, and a test checks that the two agree).
//
// A package may import:
//   - a package of a layer its own layer lists in MayImport;
//   - a package of its own layer, if the layer says Peers (e.g. repl and repl/rafthttp);
//   - a package below its own path (internal/sql/plan -> internal/sql/plan/join), except a test
//     helper.
// Anything else inside the module is an upward (or sideways) import and fails the check. A package
// that matches no layer fails too: a new package must be placed in this table before it lands.
// Packages outside the module (the standard library, pebble, the TiDB parser) are not checked.
//
// internal/sql's sub-packages are listed ahead of the moves issue 14 makes, in its order (facade ->
// ddl, dml, infoschema -> plan -> exec -> expr -> sysvar, catalog -> rowenc, builtins -> types), so
// each move lands under a rule that already says where it may point.

// layer is one row of the table.
type layer struct {
	Name string
	// Packages are import paths relative to the module; "x/..." means x and everything below it.
	Packages []string
	// MayImport names the layers this one may import ("*": every layer, for programs).
	MayImport []string
	// Peers lets packages of this layer import each other.
	Peers bool
	// TestHelper marks packages only test code may import (any test code, whatever its layer).
	TestHelper bool
	// Owns is one line for the docs: what the layer is.
	Owns string
}

// external confines a library outside the module to the layers that own it.
type external struct {
	Prefix string   // import path; packages below it count too
	Except []string // packages below Prefix anyone may import
	Layers []string // the layers that may import it
	Why    string
}

// externals: the storage engine's library stays inside internal/engine, so the layers above hold
// no engine-specific type and a second engine (DESIGN.md's B-tree) fits behind the same API.
// pebble's vfs is a filesystem abstraction (crash tests, the log's files), not the engine.
var externals = []external{
	{Prefix: "github.com/cockroachdb/pebble/v2", Except: []string{"github.com/cockroachdb/pebble/v2/vfs"},
		Layers: []string{"engine", "programs"}, Why: "the storage engine's library: only internal/engine wraps it"},
	{Prefix: "go.etcd.io/bbolt", Layers: []string{"engine", "programs"}, Why: "the B-tree engine's library, likewise"},
	{Prefix: "github.com/pingcap/tidb/pkg/parser/ast", Layers: []string{"sql", "sql-stmt", "sql-plan", "programs"},
		Why: "the parser's syntax tree: bound above sql/exec, so plans and compiled expressions hold none"},
}

// leaves are the small packages every layer may use.
var leaves = []string{"leaves"}

// below lists names followed by the layers under internal/sql that the whole SQL layer may use.
func below(names ...string) []string {
	return append(names, "txn", "repl", "log", "engine", "leaves")
}

var rules = []layer{
	{Name: "programs", Packages: []string{"cmd/...", "tools/...", "test/...", "bench/..."}, MayImport: []string{"*"},
		Owns: "binaries, tools and out-of-process tests: they wire the layers together"},
	{Name: "server", Packages: []string{"internal/server/..."},
		MayImport: below("sql", "sql-stmt", "sql-plan", "sql-exec", "sql-expr", "sql-defs", "sql-enc", "proto", "types", "backup"),
		Owns:      "the node: data directory, connections, KILL, status; implements proto.Handler (never imports mysql)"},
	{Name: "mysql", Packages: []string{"internal/mysql/..."}, MayImport: []string{"proto", "types", "leaves"},
		Owns: "the wire protocol; drives a proto.Handler (never imports server or sql)"},
	{Name: "workload", Packages: []string{"internal/workload/..."}, MayImport: leaves,
		Owns: "client-side workloads (LinkBench): talk to a server over the protocol only"},
	{Name: "sql", Packages: []string{"internal/sql"},
		MayImport: below("sql-stmt", "sql-plan", "sql-exec", "sql-expr", "sql-defs", "sql-enc", "proto", "types"),
		Owns:      "the facade: DB, Session, dispatch, prepared-plan cache, savepoints, user locks"},
	{Name: "sql-stmt", Packages: []string{"internal/sql/ddl/...", "internal/sql/dml/...", "internal/sql/infoschema/..."},
		MayImport: below("sql-plan", "sql-exec", "sql-expr", "sql-defs", "sql-enc", "proto", "types"),
		Owns:      "statement runners: DDL, DML (insert, update, delete, LOAD DATA), SHOW and information_schema"},
	{Name: "sql-plan", Packages: []string{"internal/sql/plan/..."},
		MayImport: below("sql-exec", "sql-expr", "sql-defs", "sql-enc", "proto", "types"),
		Owns:      "the planner: binder, access paths, join order"},
	{Name: "sql-exec", Packages: []string{"internal/sql/exec/..."},
		MayImport: below("sql-expr", "sql-defs", "sql-enc", "proto", "types"),
		Owns:      "iterators and the row primitives with FK and CHECK enforcement"},
	{Name: "sql-expr", Packages: []string{"internal/sql/expr/..."},
		MayImport: below("sql-defs", "sql-enc", "proto", "types"),
		Owns:      "compiled expressions and the builtin registry"},
	{Name: "sql-defs", Packages: []string{"internal/sql/sysvar/...", "internal/sql/catalog/..."},
		MayImport: below("sql-enc", "types"),
		Owns:      "system variable definitions; the catalog (definitions, copy-on-write, load/save)"},
	{Name: "sql-enc", Packages: []string{"internal/sql/rowenc/...", "internal/sql/builtins/...", "internal/sql/gtid/...", "internal/sql/sqltext/..."},
		MayImport: []string{"types", "leaves"},
		Owns:      "key and row encodings (the key space); the pure builtin function library; GTID set text; statement text normalisation"},
	{Name: "proto", Packages: []string{"internal/proto/..."}, MayImport: []string{"types", "leaves"},
		Owns: "the Handler/Session interfaces and the protocol-neutral shapes between server and mysql"},
	{Name: "types", Packages: []string{"internal/sql/types/..."}, MayImport: leaves,
		Owns: "SQL values, column types, conversion, comparison, collations (shared with proto and mysql)"},
	{Name: "backup", Packages: []string{"internal/backup/..."}, MayImport: []string{"repl", "log", "engine", "leaves"},
		Owns: "online backups: the engine snapshot + log stream, backup directories, verify, restore"},
	{Name: "txn", Packages: []string{"internal/txn/..."}, MayImport: []string{"repl", "log", "engine", "leaves"},
		Owns: "transactions, row locks, write sets and their log record"},
	{Name: "repltest", Packages: []string{"internal/repl/repltest/..."}, MayImport: []string{"repl", "log", "engine", "leaves"}, TestHelper: true,
		Owns: "the real commit path for tests of the layers above"},
	{Name: "repl", Packages: []string{"internal/repl", "internal/repl/rafthttp/..."}, MayImport: []string{"log", "engine", "leaves"}, Peers: true,
		Owns: "consensus on the binlog, group commit, apply; rafthttp: the raft transport"},
	{Name: "log", Packages: []string{"internal/log/..."}, MayImport: leaves,
		Owns: "the binlog: segments, framing, recovery, purge"},
	{Name: "engine", Packages: []string{"internal/engine/..."}, MayImport: leaves,
		Owns: "the storage engine: reads, snapshots, atomic batches with the applied index"},
	{Name: "leaves", Packages: []string{"internal/sqlerr/...", "internal/auth/...", "internal/memory/...", "internal/tlsconf/..."},
		MayImport: nil, Peers: true,
		Owns: "usable by all: MySQL errors, password hashes, memory accounting, TLS configuration"},
}

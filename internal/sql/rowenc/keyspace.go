// Package rowenc owns how the SQL layer's data is laid out in the engine: the key space (which
// byte strings name catalog records, rows, index entries and counters), the order-preserving
// encoding of key columns (AppendKey, DecodeKey) and the row format (AppendRow, DecodeRow).
//
// The whole engine key space, ordered as the engine sorts it. The 0x00 keys belong to the layers
// below (internal/engine and internal/repl define them; they are listed here so that the space has
// one table); everything from 0x01 on is built only by this package.
//
//	0x00 'a' 'p' 'p' 'l' 'i' 'e' 'd'           engine: the last applied log position (engine.AppliedKey)
//	0x00 'c' 'o' 'n' 'f'                        repl: raft ConfState as applied
//	0x00 'm' 'e' 'm' 'b' <node id: 8>           repl: a member's raft address (and its role)
//	0x00 's' 'n' 'a' 'p'                        repl: engine snapshot install in progress (index, term)
//	0x01 'A'                                    accounts initialised (root@localhost written)
//	0x01 'a' <user> 0x00 <host>                 an account with its privileges (JSON; lower-case host)
//	0x01 'd' <db name>                          a database definition (JSON; lower-case name)
//	0x01 'n'                                    next table id (8 bytes)
//	0x01 't' <table id: 8>                      a table definition (JSON)
//	0x01 'v'                                    format version (4 bytes, FormatVersion)
//	0x01 'w' <db> 0x00 <view name>              a view definition (JSON; lower-case names)
//	't' <table id: 8> 0x00000000 <column id: 4> the table's AUTO_INCREMENT counter (AutoIncKey)
//	't' <table id: 8> 0x00000001 <key columns>  a row: primary-index key -> AppendRow of every column
//	't' <table id: 8> <index id: 4> <key cols>  a secondary index entry (index ids from 2); non-unique
//	                                            entries (and unique ones with a NULL) append the
//	                                            primary key columns; the value is AppendRow of the
//	                                            index's columns and the primary key's not among
//	                                            them (read by column id: entries that repeat them
//	                                            read the same)
//
// Numbers are big-endian, so a table's keys, and an index's, are contiguous: DROP TABLE, TRUNCATE
// and DROP INDEX are range deletions of TableSpan or IndexSpan. Every catalog key starts with
// SysPrefix; replicas watch writes under it to know their catalog changed.
//
// Invariants (the tests check each of them):
//   - AppendKey is order-preserving: for two values a, b already Convert()ed to a column type t,
//     bytes.Compare(AppendKey(nil, a, t), AppendKey(nil, b, t)) == Compare(a, b, t.Coll()), with NULL
//     first. Keys are self-delimiting, so composite keys are plain concatenations.
//   - DecodeKey inverts AppendKey whenever KeyReversible(t) is true; otherwise it returns
//     ErrKeyNotReversible and the caller reads the row.
//   - DecodeRow(AppendRow(v)) == v for every value Convert can produce, and DecodeRow never panics
//     on corrupt input.
//
// This package must not import internal/sql or know about table definitions (the facade builds a
// row's keys from its Table with IndexPrefix and AppendKey), and it must not change an encoding
// without a new FormatVersion: every byte it defines is on disk and in the replicated log.
package rowenc

import (
	"encoding/binary"
	"strings"
)

// FormatVersion is the on-disk format of the catalog and key layout. A data directory with another
// version refuses to start.
const FormatVersion = 1

const (
	// SysPrefix is the first byte of every catalog key.
	SysPrefix = 0x01
	// TablePrefix is the first byte of every key of a table: rows, index entries, counters.
	TablePrefix = 't'
	// PrimaryIndexID is the index id of a table's rows (the clustered primary index).
	PrimaryIndexID = 1
	// autoIncIndexID is the index id under which AUTO_INCREMENT counters live: inside the table's
	// span, so that DROP TABLE and TRUNCATE reset them.
	autoIncIndexID = 0
)

// FormatVersionKey is where the catalog's format version is kept.
func FormatVersionKey() []byte { return []byte{SysPrefix, 'v'} }

// NextTableIDKey is where the next table id is kept.
func NextTableIDKey() []byte { return []byte{SysPrefix, 'n'} }

// DBDefKey is the key of database name's definition (the caller lower-cases the name).
func DBDefKey(name string) []byte { return append([]byte{SysPrefix, 'd'}, name...) }

// DBDefSpan returns [lo, hi) of every database definition.
func DBDefSpan() ([]byte, []byte) { return []byte{SysPrefix, 'd'}, []byte{SysPrefix, 'e'} }

// TableDefKey is the key of table id's definition.
func TableDefKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{SysPrefix, 't'}, id)
}

// TableDefSpan returns [lo, hi) of every table definition.
func TableDefSpan() ([]byte, []byte) { return []byte{SysPrefix, 't'}, []byte{SysPrefix, 'u'} }

// ViewDefKey is the key of view db.name's definition (names lower-cased here).
func ViewDefKey(db, name string) []byte {
	k := append([]byte{SysPrefix, 'w'}, strings.ToLower(db)...)
	k = append(k, 0)
	return append(k, strings.ToLower(name)...)
}

// ViewDefSpan returns [lo, hi) of every view definition.
func ViewDefSpan() ([]byte, []byte) { return []byte{SysPrefix, 'w'}, []byte{SysPrefix, 'x'} }

// AccountKey is the key of account user@host (the host lower-cased here; user names are case
// sensitive, as in MySQL).
func AccountKey(user, host string) []byte {
	k := append([]byte{SysPrefix, 'a'}, user...)
	k = append(k, 0)
	return append(k, strings.ToLower(host)...)
}

// AccountSpan returns [lo, hi) of every account.
func AccountSpan() ([]byte, []byte) { return []byte{SysPrefix, 'a'}, []byte{SysPrefix, 'b'} }

// ACLInitKey marks that the accounts were initialised: a data directory without it gets
// root@localhost.
func ACLInitKey() []byte { return []byte{SysPrefix, 'A'} }

// TableSpan returns [lo, hi) of every key of table id.
func TableSpan(id uint64) ([]byte, []byte) {
	lo := binary.BigEndian.AppendUint64([]byte{TablePrefix}, id)
	hi := binary.BigEndian.AppendUint64([]byte{TablePrefix}, id+1)
	return lo, hi
}

// IndexPrefix appends the key prefix of index iid of table tid to buf.
func IndexPrefix(buf []byte, tid uint64, iid uint32) []byte {
	buf = append(buf, TablePrefix)
	buf = binary.BigEndian.AppendUint64(buf, tid)
	return binary.BigEndian.AppendUint32(buf, iid)
}

// IndexSpan returns [lo, hi) of index iid of table tid.
func IndexSpan(tid uint64, iid uint32) ([]byte, []byte) {
	return IndexPrefix(nil, tid, iid), IndexPrefix(nil, tid, iid+1)
}

// IsRowKey reports whether k is a row (a primary-index key), not a secondary index entry, a
// counter or a catalog key.
func IsRowKey(k []byte) bool {
	return len(k) > 13 && k[0] == TablePrefix && binary.BigEndian.Uint32(k[9:13]) == PrimaryIndexID
}

// AutoIncKey is where table tid's AUTO_INCREMENT counter for column col is persisted: index id 0
// of the table's key space, so that DROP TABLE and TRUNCATE (range deletions of the table) reset it.
func AutoIncKey(tid uint64, col uint32) []byte {
	return binary.BigEndian.AppendUint32(IndexPrefix(nil, tid, autoIncIndexID), col)
}

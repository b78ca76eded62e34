// Package proto owns the contract between the node and the wire protocol: the Handler and Session
// interfaces (handler.go) that internal/server implements and internal/mysql drives, and the
// protocol-neutral shapes that cross between them: result-set columns, OK results, the
// ResultWriter a statement writes its results into, and what a handshake learned about a client.
// internal/mysql encodes them; internal/server produces them; neither imports the other. proto
// holds no behaviour beyond rendering a value as column text, and imports only the value types.
package proto

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Column describes one result-set column (a ColumnDefinition41 packet).
type Column struct {
	Schema   string
	Table    string // alias
	OrgTable string
	Name     string // alias
	OrgName  string
	Type     byte   // MySQL type code (parser/mysql.TypeXxx)
	Flags    uint16 // NOT_NULL, PRI_KEY, UNSIGNED, BINARY, ... (parser/mysql.XxxFlag)
	Length   uint32
	Decimals byte
	Charset  uint16 // collation id: 63 binary, 255 utf8mb4_0900_ai_ci, 46 utf8mb4_bin, ...
}

// OK is the outcome of a statement that returns no rows.
type OK struct {
	AffectedRows uint64
	LastInsertID uint64
	Warnings     uint16
	Info         string
	// SessionState, when set, is sent as session-state-change data (CLIENT_SESSION_TRACK) if the
	// client asked for it: the commit's log position, as DESIGN.md describes.
	SessionState []byte
}

// ResultWriter receives the results of one COM_QUERY or COM_STMT_EXECUTE. Each statement produces
// either OK, or Columns, then Rows, then EndRows. more says whether another result follows (multi
// statements), which sets SERVER_MORE_RESULTS_EXISTS. Row's values, their strings included, are
// valid only during the call: the executor may decode the next row into the same memory, so a
// writer that keeps rows copies them.
type ResultWriter interface {
	Columns(cols []Column) error
	Row(vals []types.Value) error
	EndRows(warnings uint16, more bool) error
	OK(ok OK, more bool) error
}

// ConnInfo is what the handshake learned about a client.
type ConnInfo struct {
	ConnID uint32
	User   string // the login name the client sent (USER())
	Host   string // the client's address, without port
	// Account is the account the login matched and authenticated as (CURRENT_USER()).
	Account      Account
	DB           string // database from the handshake, "" if none
	Capabilities uint32
	Collation    uint16 // the client's handshake collation id
	Attrs        map[string]string
	// TLS says whether the connection is encrypted; TLSVersion and TLSCipher name what was
	// negotiated as MySQL does ("TLSv1.3", "TLS_AES_128_GCM_SHA256"), "" without TLS. They are the
	// session status variables Ssl_version and Ssl_cipher.
	TLS                   bool
	TLSVersion, TLSCipher string
}

// Account is what the protocol layer needs to authenticate a login: the matched account's
// identity, its plugin and stored authentication string (a hash, never the password), and the
// flags checked at connect time.
type Account struct {
	User, Host string // the account's name and host pattern, as in mysql.user
	Plugin     string // mysql_native_password or caching_sha2_password
	AuthString string // the stored hash ("" for no password)
	RequireSSL bool   // REQUIRE SSL (or X509 and stronger): refused over an insecure transport
	Locked     bool   // ACCOUNT LOCK: 3118 after a successful authentication
}

// StmtInfo describes a prepared statement.
type StmtInfo struct {
	ID      uint32
	Params  int      // number of placeholders
	Columns []Column // result columns, nil if none or unknown until execution
}

// AppendColumnText renders v as text, as the text protocol and SELECT ... INTO OUTFILE send it. A FLOAT column prints its values as MySQL prints single
// precision (6 significant digits) even when the value does not say so itself.
func AppendColumnText(b []byte, v *types.Value, col *Column) []byte {
	if col.Type == mysql.TypeYear && v.K == types.KindInt && v.I >= 0 && v.I < 10000 {
		// YEAR prints four digits: 0 is 0000.
		return append(b, byte('0'+v.I/1000), byte('0'+v.I/100%10), byte('0'+v.I/10%10), byte('0'+v.I%10))
	}
	if col.Type == mysql.TypeBit && (v.K == types.KindUint || v.K == types.KindInt) {
		// BIT(n) values travel as ceil(n/8) big-endian bytes, in both protocols.
		n := max((int(col.Length)+7)/8, 1)
		for i := n - 1; i >= 0; i-- {
			b = append(b, byte(uint64(v.I)>>(8*uint(i))))
		}
		return b
	}
	if v.K == types.KindFloat && v.Frac == 0 && col.Type == mysql.TypeFloat {
		f := *v
		f.Frac = types.FracFloat32
		return types.AppendText(b, f)
	}
	return types.AppendText(b, *v)
}

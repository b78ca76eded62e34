package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkBulkInsert: LinkBench's load statements (1,024-row INSERTs as LinkStoreMysql sends
// them, latin1 tables, hex-literal payloads, autocommit off) through the whole SQL path and the
// commit path over the in-memory log: nodetable (auto-increment key, "INSERT ...; commit;"),
// linktable (INSERT .. ON DUPLICATE KEY UPDATE, a 7-column secondary index, then COMMIT) and
// counttable (REPLACE, then COMMIT). Reported per row.
func BenchmarkBulkInsert(b *testing.B) {
	const rows = 1024
	rng := rand.New(rand.NewPCG(1, 1))
	hex := func(n int) string {
		var sb strings.Builder
		sb.WriteString("x'")
		for range n {
			fmt.Fprintf(&sb, "%02x", 32+rng.IntN(69))
		}
		sb.WriteByte('\'')
		return sb.String()
	}
	for _, bc := range []struct {
		name  string
		table string
		stmt  func(batch int) string
	}{
		{"nodetable", "CREATE TABLE nodetable (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, type INT UNSIGNED NOT NULL, version BIGINT UNSIGNED NOT NULL, time INT UNSIGNED NOT NULL, data MEDIUMTEXT NOT NULL, PRIMARY KEY (id)) DEFAULT CHARSET=latin1",
			func(int) string {
				var sb strings.Builder
				sb.WriteString("INSERT INTO nodetable (type, version, time, data) VALUES ")
				for i := range rows {
					if i > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, "(2048,1,1700000000,%s)", hex(128))
				}
				sb.WriteString("; commit;")
				return sb.String()
			}},
		{"linktable", "CREATE TABLE linktable (id1 BIGINT UNSIGNED NOT NULL DEFAULT 0, id2 BIGINT UNSIGNED NOT NULL DEFAULT 0, link_type BIGINT UNSIGNED NOT NULL DEFAULT 0, visibility TINYINT NOT NULL DEFAULT 0, data VARCHAR(255) NOT NULL DEFAULT '', time BIGINT UNSIGNED NOT NULL DEFAULT 0, version INT UNSIGNED NOT NULL DEFAULT 0, PRIMARY KEY (link_type, id1, id2), KEY id1_type (id1, link_type, visibility, time, id2, version, data)) DEFAULT CHARSET=latin1",
			func(batch int) string {
				var sb strings.Builder
				sb.WriteString("INSERT INTO linktable(id1, id2, link_type, visibility, data, time, version) VALUES ")
				for i := range rows {
					if i > 0 {
						sb.WriteByte(',')
					}
					id1 := batch*rows/4 + i/4
					// As LinkStoreMysql sends a payload: hex, or quoted when it is letters and
					// digits only (a quarter of LinkBench's short link payloads).
					data := hex(8)
					if rng.IntN(4) == 0 {
						data = fmt.Sprintf("'p%d'", rng.IntN(1000))
					}
					fmt.Fprintf(&sb, "(%d, %d, %d, 1, %s, %d, 0)", id1, id1+i%4, 123456789+i%2, data, 1700000000000+rng.IntN(1<<32))
				}
				sb.WriteString(" ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)")
				return sb.String()
			}},
		{"counttable", "CREATE TABLE counttable (id BIGINT UNSIGNED NOT NULL DEFAULT 0, link_type BIGINT UNSIGNED NOT NULL DEFAULT 0, count INT NOT NULL DEFAULT 0, time BIGINT UNSIGNED NOT NULL DEFAULT 0, version BIGINT UNSIGNED NOT NULL DEFAULT 0, PRIMARY KEY (id, link_type)) DEFAULT CHARSET=latin1",
			func(batch int) string {
				var sb strings.Builder
				sb.WriteString("REPLACE INTO counttable(id, link_type, count, time, version) VALUES ")
				for i := range rows {
					if i > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, "(%d, %d, 3, 1700000000000, 0)", batch*rows/2+i/2, 123456789+i%2)
				}
				return sb.String()
			}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db := testDB(b)
			s := db.NewSession(1, "root", "localhost", "")
			defer s.Close()
			ctx := context.Background()
			for _, q := range []string{"CREATE DATABASE lb", "USE lb", bc.table, "SET autocommit = 0"} {
				if err := s.Query(ctx, q, &discardWriter{}); err != nil {
					b.Fatal(err)
				}
			}
			// Statements are built outside the timer (the client's cost).
			stmts := make([]string, b.N)
			for i := range stmts {
				stmts[i] = bc.stmt(i)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if err := s.Query(ctx, stmts[i], &discardWriter{}); err != nil {
					b.Fatal(err)
				}
				if bc.name != "nodetable" { // its text ends in "; commit;"
					if err := s.Query(ctx, "commit", &discardWriter{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			// The process's CPU time (every goroutine: the commit path, GC): on a shared machine
			// a steadier figure than the wall time.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*rows), "cpu-ns/row")
		})
	}
}

// processCPU is the process's user and system CPU time so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

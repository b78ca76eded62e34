package linkbench

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// CountKey is one counttable key: a node and a link type.
type CountKey struct {
	ID1      uint64 `json:"id1"`
	LinkType uint64 `json:"link_type"`
}

// Mismatch is a (id1, link_type) whose counttable.count differs from the
// number of its links with visibility = 1. A missing counttable row counts
// as 0 (and is reported with HasRow false).
type Mismatch struct {
	CountKey
	Visible uint64 `json:"visible_links"`
	Count   uint64 `json:"count"`
	HasRow  bool   `json:"counttable_row"`
}

// CheckReport is the outcome of the consistency check.
type CheckReport struct {
	Groups     int        `json:"visible_groups"` // (id1, link_type) with visible links
	CountRows  int        `json:"counttable_rows"`
	Mismatches int        `json:"mismatches"`
	Examples   []Mismatch `json:"examples,omitempty"` // the first ones, by key
	Seconds    float64    `json:"seconds"`
}

// OK reports whether the counts matched.
func (c *CheckReport) OK() bool { return c.Mismatches == 0 }

// CompareCounts compares the visible-link counts per key (from the GROUP BY)
// with counttable's rows and returns every mismatch, sorted by key. A
// counttable row with count 0 and no visible links is consistent.
func CompareCounts(visible, counts map[CountKey]uint64) []Mismatch {
	var out []Mismatch
	for k, v := range visible {
		c, ok := counts[k]
		if !ok || c != v {
			out = append(out, Mismatch{CountKey: k, Visible: v, Count: c, HasRow: ok})
		}
	}
	for k, c := range counts {
		if _, ok := visible[k]; !ok && c != 0 {
			out = append(out, Mismatch{CountKey: k, Visible: 0, Count: c, HasRow: true})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID1 != out[j].ID1 {
			return out[i].ID1 < out[j].ID1
		}
		return out[i].LinkType < out[j].LinkType
	})
	return out
}

// Check counts visible links per (id1, link_type) with one GROUP BY query,
// reads counttable, and compares them (in one transaction, so both reads see
// the same snapshot on servers that give one).
func Check(ctx context.Context, db *sql.DB, maxExamples int) (*CheckReport, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }() // read-only
	visible, err := readCounts(ctx, conn,
		"SELECT id1, link_type, COUNT(*) FROM linktable WHERE visibility = 1 GROUP BY id1, link_type")
	if err != nil {
		return nil, fmt.Errorf("check: visible links: %w", err)
	}
	counts, err := readCounts(ctx, conn, "SELECT id, link_type, count FROM counttable")
	if err != nil {
		return nil, fmt.Errorf("check: counttable: %w", err)
	}
	mm := CompareCounts(visible, counts)
	rep := &CheckReport{Groups: len(visible), CountRows: len(counts), Mismatches: len(mm)}
	if len(mm) > maxExamples {
		mm = mm[:maxExamples]
	}
	rep.Examples = mm
	return rep, nil
}

func readCounts(ctx context.Context, conn *sql.Conn, query string) (map[CountKey]uint64, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := make(map[CountKey]uint64)
	for rows.Next() {
		var k CountKey
		var n uint64
		if err := rows.Scan(&k.ID1, &k.LinkType, &n); err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("duplicate key (%d, %d) in %q", k.ID1, k.LinkType, query)
		}
		m[k] = n
	}
	return m, rows.Err()
}

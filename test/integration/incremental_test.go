package integration

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tableSum is a table's contents as one checksum, and its row count.
func tableSum(t *testing.T, k *kiln, table string) (string, int) {
	t.Helper()
	rows, err := k.db(t, "").Query("SELECT id, v FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	h := sha256.New()
	n := 0
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%d=%d;", id, v)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

func backupBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// A full backup and two log-only incrementals (kiln backup --form logical --incremental-from):
// each incremental holds only the log after its parent's end; kiln backup verify checks the chain; the restored chain equals
// a full backup taken at the same point (same rows, same position), also at an index in the
// middle of an incremental; a chain whose parent is damaged is refused.
func TestBackupIncrementalChain(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE inc")
	mustExec(t, db, "CREATE TABLE inc.t (id INT PRIMARY KEY, v BIGINT NOT NULL, pad VARCHAR(200))")
	for b := 0; b < 4; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO inc.t VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 0, REPEAT('p', 200))", b*500+i)
		}
		mustExec(t, db, sb.String())
	}
	root := t.TempDir()
	full := filepath.Join(root, "full")
	fm := takeBackup(t, k, full, "--form", "logical")
	// 10% of the rows change between backups, one commit each, plus a few new rows.
	change := func(round int) {
		for i := 0; i < 200; i++ {
			mustExec(t, db, "UPDATE inc.t SET v = v + ? WHERE id = ?", round, (i*10+round)%2000)
		}
		mustExec(t, db, "INSERT INTO inc.t VALUES (?, ?, 'new')", 10000+round, round)
	}
	change(1)
	inc1 := filepath.Join(root, "inc1")
	out, err := runKiln("backup", "--from", k.http, "--to", inc1, "--incremental-from", full, "--form", "logical")
	if err != nil || !strings.Contains(out, "incremental: follows") {
		t.Fatalf("kiln backup --incremental-from: %v\n%s", err, out)
	}
	m1 := readManifest(t, inc1)
	change(2)
	inc2 := filepath.Join(root, "inc2")
	if out, err := runKiln("backup", "--from", k.http, "--to", inc2, "--incremental-from", inc1, "--form", "logical"); err != nil {
		t.Fatalf("kiln backup --incremental-from: %v\n%s", err, out)
	}
	m2 := readManifest(t, inc2)
	if m1.EngineIndex != fm.EndIndex || m2.EngineIndex != m1.EndIndex || m2.EndIndex <= m2.EngineIndex {
		t.Fatalf("chain positions: full ..%d, inc1 %d..%d, inc2 %d..%d", fm.EndIndex, m1.EngineIndex, m1.EndIndex, m2.EngineIndex, m2.EndIndex)
	}
	for _, m := range []backupManifest{m1, m2} {
		for _, f := range m.Files {
			if !strings.HasPrefix(f.Path, "log/") {
				t.Fatalf("an incremental backup holds %s", f.Path)
			}
		}
	}
	t.Logf("sizes: full %d bytes, incrementals %d and %d bytes (201 commits each, 10%% of 2000 rows changed)", backupBytes(t, full), backupBytes(t, inc1), backupBytes(t, inc2))
	if out, err := runKiln("backup", "verify", inc2); err != nil || !strings.Contains(out, fmt.Sprintf(`"end_index": %d`, m2.EndIndex)) {
		t.Fatalf("kiln backup verify of the chain: %v\n%s", err, out)
	}
	whole := filepath.Join(root, "whole")
	wm := takeBackup(t, k, whole, "--form", "logical")
	if wm.EndIndex != m2.EndIndex {
		t.Fatalf("nothing was written after inc2, yet the full backup ends at %d, inc2 at %d", wm.EndIndex, m2.EndIndex)
	}
	want, wantRows := tableSum(t, k, "inc.t")
	var positions []string
	for _, dir := range []string{inc2, whole} {
		r := restoreAndStart(t, dir, 0)
		got, n := tableSum(t, r, "inc.t")
		var gtid string
		if err := r.db(t, "").QueryRow("SELECT @@gtid_executed").Scan(&gtid); err != nil {
			t.Fatal(err)
		}
		r.stop()
		if got != want || n != wantRows {
			t.Fatalf("restore of %s: %d rows (sum %s); the source has %d rows (sum %s) at index %d", dir, n, got, wantRows, want, m2.EndIndex)
		}
		// The restored node's own position: the source's index, plus its first leader's empty entry.
		_, pos, _ := strings.Cut(gtid, ":")
		positions = append(positions, pos)
	}
	if positions[0] != positions[1] || positions[0] != fmt.Sprintf("1-%d", m2.EndIndex+1) {
		t.Fatalf("restored positions %v, want both 1-%d", positions, m2.EndIndex+1)
	}
	// In the middle of inc1: the chain and a restore of the first incremental agree.
	mid := m1.EngineIndex + (m1.EndIndex-m1.EngineIndex)/2
	a := restoreAndStart(t, inc2, mid)
	sa, _ := tableSum(t, a, "inc.t")
	a.stop()
	b := restoreAndStart(t, inc1, mid)
	sb, _ := tableSum(t, b, "inc.t")
	b.stop()
	if sa != sb {
		t.Fatalf("--to-index %d: the chain ending in inc2 and the one ending in inc1 restore different rows", mid)
	}
	// A damaged parent is found through the child.
	p := filepath.Join(full, "engine", "000001.kv")
	raw, _ := os.ReadFile(p)
	raw[len(raw)/2] ^= 0x20
	os.WriteFile(p, raw, 0o600)
	for _, args := range [][]string{{"backup", "verify", inc2}, {"restore", "--from", inc2, "--data-dir", filepath.Join(t.TempDir(), "d")}} {
		if out, err := runKiln(args...); err == nil || !strings.Contains(out, p) || !strings.Contains(out, "SHA-256") {
			t.Fatalf("%v with a damaged full backup: %v\n%s", args, err, out)
		}
	}
}

// A full file-form backup and two file-form incrementals (kiln backup --incremental-from, the
// default form): each copies only the sstables the chain does not hold (the others are
// references) plus the log; the chain restores to the same rows and position as a full backup
// taken at the same point; a damaged sstable of the full backup is found through the child.
func TestBackupFileIncrementalChain(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE finc")
	mustExec(t, db, "CREATE TABLE finc.t (id INT PRIMARY KEY, v BIGINT NOT NULL, pad VARCHAR(200))")
	for b := 0; b < 4; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO finc.t VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 0, '%x')", b*500+i, sha256.Sum256([]byte(fmt.Sprint(b*500+i))))
		}
		mustExec(t, db, sb.String())
	}
	root := t.TempDir()
	full := filepath.Join(root, "full")
	takeBackup(t, k, full)
	change := func(round int) {
		for i := 0; i < 200; i++ {
			mustExec(t, db, "UPDATE finc.t SET v = v + ? WHERE id = ?", round, (i*10+round)%2000)
		}
		mustExec(t, db, "INSERT INTO finc.t VALUES (?, ?, 'new')", 10000+round, round)
	}
	refs := func(dir string) (n int) {
		b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.json"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), `"ref": true`)
	}
	prev := full
	var incs []string
	for round := 1; round <= 2; round++ {
		change(round)
		inc := filepath.Join(root, fmt.Sprintf("inc%d", round))
		out, err := runKiln("backup", "--from", k.http, "--to", inc, "--incremental-from", prev)
		if err != nil || !strings.Contains(out, "incremental: follows") {
			t.Fatalf("kiln backup --incremental-from: %v\n%s", err, out)
		}
		if refs(inc) == 0 {
			t.Fatalf("incremental %d refers to no sstable of its chain:\n%s", round, out)
		}
		incs = append(incs, inc)
		prev = inc
	}
	t.Logf("sizes: full %d bytes, incrementals %d and %d bytes", backupBytes(t, full), backupBytes(t, incs[0]), backupBytes(t, incs[1]))
	if out, err := runKiln("backup", "verify", incs[1]); err != nil {
		t.Fatalf("kiln backup verify of the chain: %v\n%s", err, out)
	}
	whole := filepath.Join(root, "whole")
	wm := takeBackup(t, k, whole)
	want, wantRows := tableSum(t, k, "finc.t")
	for _, dir := range []string{incs[1], whole} {
		r := restoreAndStart(t, dir, 0)
		got, n := tableSum(t, r, "finc.t")
		r.stop()
		if got != want || n != wantRows {
			t.Fatalf("restore of %s: %d rows (sum %s); the source has %d rows (sum %s) at index %d", dir, n, got, wantRows, want, wm.EndIndex)
		}
	}
	// A damaged sstable that an incremental refers to (inc2 if any: compactions may have rewritten
	// all of them by then), in the earlier backup that holds it.
	var p, target string
	for i := len(incs) - 1; i >= 0 && p == ""; i-- {
		var m struct {
			Files []struct {
				Path string `json:"path"`
				Ref  bool   `json:"ref"`
			} `json:"files"`
		}
		b, _ := os.ReadFile(filepath.Join(incs[i], "MANIFEST.json"))
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if !f.Ref || !strings.HasSuffix(f.Path, ".sst") || p != "" {
				continue
			}
			for j := i - 1; j >= -1 && p == ""; j-- { // the newest holder first
				d := full
				if j >= 0 {
					d = incs[j]
				}
				if _, err := os.Stat(filepath.Join(d, filepath.FromSlash(f.Path))); err == nil {
					p, target = filepath.Join(d, filepath.FromSlash(f.Path)), incs[i]
				}
			}
		}
	}
	if p == "" {
		t.Fatal("no incremental refers to an sstable of its chain")
	}
	raw, _ := os.ReadFile(p)
	raw[len(raw)/2] ^= 0x20
	os.WriteFile(p, raw, 0o600)
	for _, args := range [][]string{{"backup", "verify", target}, {"restore", "--from", target, "--data-dir", filepath.Join(t.TempDir(), "d")}} {
		if out, err := runKiln(args...); err == nil || !strings.Contains(out, p) || !strings.Contains(out, "CRC32C") {
			t.Fatalf("%v with a damaged sstable it refers to: %v\n%s", args, err, out)
		}
	}
}

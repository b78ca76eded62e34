package sql

import (
	"context"
	"fmt"
	"testing"
)

// TestLoadDataGeneratedColumns: LOAD DATA computes generated columns (their unique keys checked
// like any other) and evaluates expression defaults per row; a SET of a generated column is 3105.
func TestLoadDataGeneratedColumns(t *testing.T) {
	ls := newLoadSession(t)
	ls.exec("CREATE TABLE g (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED, c INT AS (b + 1), d INT DEFAULT (id * 10), UNIQUE KEY ub (b))")
	ls.files["g.txt"] = "1\t5\n2\t7\n3\t5\n"
	ls.expect("LOAD DATA LOCAL INFILE 'g.txt' INTO TABLE g (id, a)",
		"ok affected=2 warnings=1 | Records: 3  Deleted: 0  Skipped: 1  Warnings: 1")
	ls.expect("SELECT * FROM g ORDER BY id", "1\t5\t10\t11\t10\n2\t7\t14\t15\t20")
	ls.expect("SELECT id FROM g WHERE b = 14", "2")
	ls.files["h.txt"] = "4\t1\n"
	ls.expect("LOAD DATA LOCAL INFILE 'h.txt' INTO TABLE g (id, @x) SET a = @x + 100",
		"ok affected=1 | Records: 1  Deleted: 0  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM g WHERE id = 4", "4\t101\t202\t203\t40")
	ls.expect("LOAD DATA LOCAL INFILE 'h.txt' INTO TABLE g (id, a) SET b = 1",
		"error 3105 (HY000): The value specified for generated column 'b' in table 'g' is not allowed.")
	ls.files["r.txt"] = "4\t2\n"
	ls.expect("LOAD DATA LOCAL INFILE 'r.txt' REPLACE INTO TABLE g (id, a)",
		"ok affected=2 | Records: 1  Deleted: 1  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM g WHERE id = 4", "4\t2\t4\t5\t40")
	// Without a column list every visible column takes a field: a generated column's field is
	// read and ignored (the column is computed), without a warning, as MariaDB 10.11 does.
	ls.files["all.txt"] = "5\t1\t999\t999\t7\n"
	ls.expect("LOAD DATA LOCAL INFILE 'all.txt' INTO TABLE g",
		"ok affected=1 | Records: 1  Deleted: 0  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM g WHERE id = 5", "5\t1\t2\t3\t7")
}

// TestGeneratedColumnsCatalogReload: a table with generated columns and expression defaults keeps
// them across a catalog reload (their stored form), and writes after it still compute them.
func TestGeneratedColumnsCatalogReload(t *testing.T) {
	ls := newLoadSession(t)
	ls.exec("CREATE TABLE r (id INT PRIMARY KEY, a INT, v INT AS (a + 1), s INT AS (a * 2) STORED, e INT DEFAULT (a + 5), KEY iv (v))")
	ls.exec("INSERT INTO r (id, a) VALUES (1, 1)")
	db := ls.s.db
	cat, err := loadCatalog(db.txm) // the stored definitions, as a restart or a replica reads them
	if err != nil {
		t.Fatal(err)
	}
	cat.Version = db.cat.Load().Version + 1
	db.cat.Store(cat)
	ls.expect("SHOW CREATE TABLE r", "r\tCREATE TABLE `r` (\n"+
		"  `id` int NOT NULL,\n"+
		"  `a` int DEFAULT NULL,\n"+
		"  `v` int GENERATED ALWAYS AS ((`a` + 1)) VIRTUAL,\n"+
		"  `s` int GENERATED ALWAYS AS ((`a` * 2)) STORED,\n"+
		"  `e` int DEFAULT ((`a` + 5)),\n"+
		"  PRIMARY KEY (`id`),\n"+
		"  KEY `iv` (`v`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	ls.exec("INSERT INTO r (id, a) VALUES (2, 2)")
	ls.exec("UPDATE r SET a = 10 WHERE id = 1")
	ls.expect("SELECT * FROM r ORDER BY id", "1\t10\t11\t20\t6\n2\t2\t3\t4\t7")
	ls.expect("SELECT id FROM r WHERE v = 11", "1")
}

// TestGeneratedColumnsConcurrentWriters: sessions writing one table at once compile its
// generated expressions once (the table's GenCache) and every row holds its own values; run with
// -race.
func TestGeneratedColumnsConcurrentWriters(t *testing.T) {
	ls := newLoadSession(t)
	ls.exec("CREATE TABLE w (id INT PRIMARY KEY, a INT, b INT AS (a * 3) STORED, c INT DEFAULT (a + 1), UNIQUE KEY ub (b))")
	db := ls.s.db
	const n, per = 4, 25
	errs := make(chan error, n)
	for g := 0; g < n; g++ {
		go func(g int) {
			s := db.NewSession(uint32(10+g), "root", "localhost", "")
			w := &textWriter{}
			if err := s.Query(context.Background(), "USE d", w); err != nil {
				errs <- err
				return
			}
			for i := 0; i < per; i++ {
				id := g*per + i
				if err := s.Query(context.Background(), fmt.Sprintf("INSERT INTO w (id, a) VALUES (%d, %d)", id, id), w); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < n; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ls.expect("SELECT COUNT(*), SUM(b = a * 3), SUM(c = a + 1) FROM w", fmt.Sprintf("%d\t%d\t%d", n*per, n*per, n*per))
}

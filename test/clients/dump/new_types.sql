-- Fixture of test/clients/dump_roundtrip.sh, loaded only with
-- DUMP_NEW_TYPES=1: ENUM, SET, BIT and JSON columns. (No 4-byte character in
-- an ENUM: MariaDB's SHOW CREATE TABLE prints it as '?'.)
CREATE TABLE t_new (
  id INT NOT NULL AUTO_INCREMENT,
  e ENUM('a','b','c d','it''s','€uro') NOT NULL DEFAULT 'a',
  en ENUM('x','y') DEFAULT NULL,
  s SET('r','w','x','it''s') DEFAULT 'r,w',
  s_nn SET('a','b') NOT NULL DEFAULT '',
  b1 BIT(1) DEFAULT NULL,
  b8 BIT(8) DEFAULT b'101',
  b64 BIT(64) DEFAULT NULL,
  j JSON DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY u_b64 (b64),
  KEY k_e_s (e, s)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='enum, set, bit, json';
INSERT INTO t_new (e, en, s, s_nn, b1, b8, b64, j) VALUES
  ('a', 'x', '', '', b'0', b'0', b'0', '{}'),
  ('b', 'y', 'r,w,x', 'a,b', b'1', b'11111111', 0xFFFFFFFFFFFFFFFF, '[]'),
  ('c d', NULL, 'x', 'b', NULL, NULL, NULL, NULL),
  ('it''s', NULL, 'it''s,r', 'a', b'1', b'10000000', 0x8000000000000000, '{"a": [1, 2.5, -3, "x\\"y\\\\z", null, true, false], "b": {"c": "😀"}}'),
  ('€uro', 'x', NULL, '', b'0', b'1', 1, '"a string with \\n newline"'),
  ('a', 'y', 'w', 'b', b'0', b'101', 2, 'null');
INSERT INTO t_new (id, e) VALUES (50, 'b');

-- Foreign keys (the dump creates tables in name order with foreign_key_checks=0, so the child
-- comes before its parent) and views (mariadb-dump writes a stand-in, then the view).
CREATE TABLE fk_parent (
  id INT NOT NULL,
  code VARCHAR(8) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO fk_parent VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE fk_child (
  id INT NOT NULL,
  pid INT DEFAULT NULL,
  pcode VARCHAR(8) DEFAULT NULL,
  PRIMARY KEY (id),
  KEY pcode (pcode),
  CONSTRAINT fk_child_p FOREIGN KEY (pid) REFERENCES fk_parent (id) ON DELETE CASCADE,
  CONSTRAINT fk_child_code FOREIGN KEY (pcode) REFERENCES fk_parent (code) ON DELETE SET NULL ON UPDATE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO fk_child VALUES (10, 1, 'one'), (11, 2, NULL), (12, NULL, 'three');
CREATE VIEW v_parents AS SELECT p.id, p.code, COUNT(c.id) AS children FROM fk_parent p LEFT JOIN fk_child c ON c.pid = p.id GROUP BY p.id, p.code;
CREATE VIEW v_new (ident, member) AS SELECT id, e FROM t_new WHERE id < 50;
CREATE TABLE checked (
  id INT NOT NULL PRIMARY KEY,
  qty INT CHECK (qty >= 0),
  price DECIMAL(8,2),
  CONSTRAINT price_positive CHECK (price > 0),
  CHECK (qty < 1000) NOT ENFORCED
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO checked VALUES (1, 0, 1.50), (2, 999, 2.00), (3, NULL, NULL);

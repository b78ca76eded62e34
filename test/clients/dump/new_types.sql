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

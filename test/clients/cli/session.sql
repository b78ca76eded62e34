-- Kiln CLI session: DDL, DML, transactions and errors through the mysql CLI
-- (Debian's mariadb-client) in batch mode with --force. cli_session.sh
-- compares stdout with session.out and the error lines (code, SQLSTATE and
-- line) with session.err. SQL that MySQL 8 and MariaDB both accept.
DROP DATABASE IF EXISTS kiln_cli;
CREATE DATABASE kiln_cli CHARACTER SET utf8mb4;
USE kiln_cli;
SELECT DATABASE();
CREATE TABLE items (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  sku VARCHAR(20) NOT NULL,
  qty INT NOT NULL DEFAULT 0,
  price DECIMAL(8,2) NULL,
  added DATE NULL,
  UNIQUE KEY uk_sku (sku),
  KEY k_qty (qty)
) DEFAULT CHARSET=utf8mb4;
INSERT INTO items (sku, qty, price, added) VALUES ('a-1', 5, 1.50, '2024-01-31');
SELECT LAST_INSERT_ID();
INSERT INTO items (sku, qty, price) VALUES ('b-2', 7, 20.00), ('c-3', 0, NULL), ('d-4', 12, 3.25);
SELECT LAST_INSERT_ID();
SELECT id, sku, qty, price, added FROM items ORDER BY id;
UPDATE items SET qty = qty + 1 WHERE qty < 10;
DELETE FROM items WHERE sku = 'd-4';
SELECT sku, qty FROM items ORDER BY sku DESC;
SELECT COUNT(*), SUM(qty), MIN(price), MAX(price) FROM items;
SELECT sku FROM items WHERE price IS NULL;
SELECT qty, COUNT(*) AS n FROM items GROUP BY qty ORDER BY qty;
SELECT sku, price * 2 AS double_price, CONCAT(sku, ':', qty) AS label FROM items WHERE price BETWEEN 1 AND 100 ORDER BY id;
SELECT 'it''s', '', NULL, 7 / 2, 7 DIV 2, -7 % 3;
-- errors: the session goes on after each
INSERT INTO items (sku) VALUES ('a-1');
SELECT * FROM no_such_table;
SELEC 1;
USE kiln_no_such_db;
SELECT DATABASE(), COUNT(*) FROM items;
-- transactions
START TRANSACTION;
INSERT INTO items (sku, qty) VALUES ('e-5', 1);
SELECT COUNT(*) FROM items WHERE sku = 'e-5';
ROLLBACK;
SELECT COUNT(*) FROM items WHERE sku = 'e-5';
BEGIN;
INSERT INTO items (sku, qty) VALUES ('f-6', 2);
SAVEPOINT s1;
INSERT INTO items (sku, qty) VALUES ('g-7', 3);
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT sku, qty FROM items WHERE sku IN ('f-6', 'g-7') ORDER BY sku;
BEGIN;
INSERT INTO items (sku, qty) VALUES ('h-8', 4);
INSERT INTO items (sku, qty) VALUES ('a-1', 4);
COMMIT;
SELECT sku, qty FROM items WHERE sku IN ('a-1', 'h-8') ORDER BY sku;
INSERT INTO items (sku, qty) VALUES ('a-1', 100) ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty);
SELECT qty FROM items WHERE sku = 'a-1';
TRUNCATE TABLE items;
SELECT COUNT(*) FROM items;
DROP TABLE items;
SELECT * FROM items;
DROP DATABASE kiln_cli;
USE kiln_cli;

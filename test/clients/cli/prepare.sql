-- Kiln CLI session, part 2: SQL-level prepared statements (PREPARE /
-- EXECUTE ... USING / DEALLOCATE PREPARE) with NULL and several types.
DROP DATABASE IF EXISTS kiln_cli_ps;
CREATE DATABASE kiln_cli_ps CHARACTER SET utf8mb4;
USE kiln_cli_ps;
CREATE TABLE p (id INT PRIMARY KEY, n BIGINT NULL, s VARCHAR(20) NULL, d DECIMAL(6,2) NULL, dt DATETIME NULL) DEFAULT CHARSET=utf8mb4;
PREPARE ins FROM 'INSERT INTO p VALUES (?, ?, ?, ?, ?)';
SET @id = 1, @n = -9000000000, @s = 'x''y', @d = 12.34, @dt = '2024-02-29 12:00:00';
EXECUTE ins USING @id, @n, @s, @d, @dt;
SET @id = 2, @n = NULL, @s = NULL, @d = NULL, @dt = NULL;
EXECUTE ins USING @id, @n, @s, @d, @dt;
SET @id = 3, @n = 0, @s = '', @d = -0.5, @dt = '1970-01-02 00:00:00';
EXECUTE ins USING @id, @n, @s, @d, @dt;
EXECUTE ins USING @id, @n, @s, @d, @dt;
DEALLOCATE PREPARE ins;
PREPARE sel FROM 'SELECT id, n, s, d, dt FROM p WHERE id >= ? ORDER BY id LIMIT ?';
SET @lo = 1, @lim = 5;
EXECUTE sel USING @lo, @lim;
SET @lo = 3;
EXECUTE sel USING @lo, @lim;
DEALLOCATE PREPARE sel;
EXECUTE sel USING @lo, @lim;
DROP DATABASE kiln_cli_ps;

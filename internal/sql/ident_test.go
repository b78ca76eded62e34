package sql

import (
	"strings"
	"testing"
)

func TestIdentifierValidation(t *testing.T) {
	ss := lockSessions(t, 1)
	s := ss[0]
	long := strings.Repeat("a", 65)
	max := strings.Repeat("é", 64) // 64 characters, 128 bytes: allowed
	for _, tc := range []struct{ q, want string }{
		{"CREATE TABLE `a\x00b` (x INT)", "error 1103"},
		{"CREATE TABLE `trail ` (x INT)", "error 1103"},
		{"CREATE TABLE `" + long + "` (x INT)", "error 1059"},
		{"CREATE TABLE `" + max + "` (x INT)", "ok affected=0"},
		{"CREATE TABLE `😀` (x INT)", "error 1300"},
		{"CREATE DATABASE `db\x00`", "error 1102"},
		{"CREATE DATABASE `" + long + "`", "error 1059"},
		{"CREATE TABLE c1 (`a\x00` INT)", "error 1166"},
		{"CREATE TABLE c2 (`" + long + "` INT)", "error 1059"},
		{"CREATE TABLE c3 (`x😀` INT)", "error 1300"},
		{"CREATE TABLE i1 (x INT, KEY `" + long + "` (x))", "error 1059"},
		{"CREATE TABLE i2 (x INT, KEY `k\x00` (x))", "error 1280"},
		{"CREATE TABLE f1 (x INT, CONSTRAINT `" + long + "` CHECK (x > 0))", "error 1059"},
		{"CREATE VIEW `v\x00` AS SELECT 1", "error 1103"},
		{"RENAME TABLE t TO `t\x00`", "error 1103"},
		{"ALTER TABLE t RENAME TO `" + long + "`", "error 1059"},
		{"ALTER TABLE t RENAME COLUMN v TO `v\x00`", "error 1166"},
		{"CREATE TABLE ok1 (x INT, KEY kx (x))", "ok affected=0"},
		{"ALTER TABLE ok1 RENAME INDEX kx TO `" + long + "`", "error 1059"},
	} {
		if got := s.run(tc.q); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.q, got, tc.want)
		}
	}
	// Nothing was created by the refused statements, and the session still works.
	s.expect("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'd'", "5")
}

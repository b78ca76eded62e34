package infoschema

import "strings"

// mysql.general_log and mysql.slow_log: MySQL's log tables, which mariadb-dump --all-databases
// asks for by name (SHOW TABLE STATUS, SHOW CREATE TABLE) whether or not SHOW TABLES lists them.
// Kiln keeps no log tables; these answer with MySQL 8's definitions and no rows.

var systemLogTables = map[string]string{
	"general_log": "CREATE TABLE `general_log` (\n" +
		"  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `command_type` varchar(64) NOT NULL,\n" +
		"  `argument` mediumblob NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
	"slow_log": "CREATE TABLE `slow_log` (\n" +
		"  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `query_time` time(6) NOT NULL,\n" +
		"  `lock_time` time(6) NOT NULL,\n" +
		"  `rows_sent` int NOT NULL,\n" +
		"  `rows_examined` int NOT NULL,\n" +
		"  `db` varchar(512) NOT NULL,\n" +
		"  `last_insert_id` int NOT NULL,\n" +
		"  `insert_id` int NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `sql_text` mediumblob NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
}

// SystemLogTable returns the definition of mysql.general_log / mysql.slow_log, or "".
func SystemLogTable(db, name string) string {
	if !strings.EqualFold(db, "mysql") {
		return ""
	}
	return systemLogTables[strings.ToLower(name)]
}

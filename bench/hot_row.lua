-- One hot row, updated in autocommit by every thread (used by bench/commit-path.sh).
--
--   sysbench bench/hot_row.lua --db-driver=mysql --mysql-host=... --mysql-db=DB prepare
--       (re)creates t1 (a INT PRIMARY KEY, b INT NOT NULL) holding the single row (1, 0)
--   sysbench bench/hot_row.lua --db-driver=mysql ... --threads=N --time=S run
--       each event is one autocommit UPDATE t1 SET b=b+1 WHERE a=1
--   sysbench bench/hot_row.lua --db-driver=mysql ... cleanup
--
-- An event whose statement fails with an error in --mysql-ignore-errors (by
-- default 1213 deadlock, 1020, 1205 lock wait timeout; the statement is rolled
-- back) is retried by sysbench and counted once when it succeeds, so the
-- `transactions` sysbench reports must equal the increase of b exactly.
-- --hot-table names another table. --hot-rows=N makes N hot rows (1, 0) ..
-- (N, 0), each event updating one of them chosen uniformly (then SUM(b) grows
-- by the transactions).

sysbench.cmdline.options = {
   hot_table = {"Name of the hot-row table", "t1"},
   hot_rows = {"Number of hot rows", 1},
}

local function connect()
   local drv = sysbench.sql.driver()
   return drv, drv:connect()
end

function cmd_prepare()
   local _, c = connect()
   local t = sysbench.opt.hot_table
   c:query("DROP TABLE IF EXISTS " .. t)
   c:query("CREATE TABLE " .. t .. " (a INT PRIMARY KEY, b INT NOT NULL)")
   for i = 1, sysbench.opt.hot_rows do
      c:query("INSERT INTO " .. t .. " VALUES (" .. i .. ", 0)")
   end
   c:disconnect()
end

function cmd_cleanup()
   local _, c = connect()
   c:query("DROP TABLE IF EXISTS " .. sysbench.opt.hot_table)
   c:disconnect()
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare},
   cleanup = {cmd_cleanup},
}

function thread_init()
   drv, con = connect()
   stmt = "UPDATE " .. sysbench.opt.hot_table .. " SET b=b+1 WHERE a="
end

function thread_done()
   con:disconnect()
end

function event()
   if sysbench.opt.hot_rows == 1 then
      con:query(stmt .. "1")
   else
      con:query(stmt .. sysbench.rand.uniform(1, sysbench.opt.hot_rows))
   end
end

package main
import (
 _ "github.com/pingcap/tidb/pkg/parser"
 _ "github.com/pingcap/tidb/pkg/parser/test_driver"
 _ "github.com/cockroachdb/pebble/v2"
 _ "github.com/cockroachdb/pebble/v2/vfs"
 _ "github.com/spf13/cobra"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/shopspring/decimal"
 _ "github.com/go-sql-driver/mysql"
)
func main(){}

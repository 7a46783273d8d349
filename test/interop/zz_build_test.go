package interop
import (
	_ "github.com/syndtr/goleveldb/leveldb/journal"
	_ "github.com/cockroachdb/pebble/v2/record"
	_ "github.com/grailbio/base/recordio"
	_ "github.com/grailbio/base/recordio/recordiozstd"
	_ "github.com/grailbio/base/recordio/recordioflate"
	_ "github.com/grailbio/base/recordio/deprecated"
)

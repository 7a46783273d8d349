package dbdecode_test

import (
	"encoding/binary"
	"fmt"

	"github.com/recfs/recfs/codec/dbdecode"
)

// A WriteBatch as leveldb writes it into its log: sequence number 100, two
// operations.
func ExampleBatch() {
	b := binary.LittleEndian.AppendUint64(nil, 100)
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = append(b, 1, 9)
	b = append(b, "user00042"...)
	b = append(b, 11)
	b = append(b, "hello world"...)
	b = append(b, 0, 4)
	b = append(b, "gone"...)
	fmt.Printf("%s", dbdecode.Batch(b, dbdecode.Options{}))
	// Output:
	// batch seq 100 count 2
	// put user00042 hello\x20world
	// delete gone
}

// The first VersionEdit of a new leveldb MANIFEST.
func ExampleVersionEdit() {
	b := []byte{1, 26}
	b = append(b, "leveldb.BytewiseComparator"...)
	b = append(b, 2, 3, 3, 5, 4, 0, 99, 1)
	fmt.Printf("%s", dbdecode.VersionEdit(b))
	// Output:
	// comparator leveldb.BytewiseComparator
	// log-number 3
	// next-file 5
	// last-seq 0
	// unknown-tag 99 at byte 34: 6301
}

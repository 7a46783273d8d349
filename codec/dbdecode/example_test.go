package dbdecode_test

import (
	"encoding/binary"
	"fmt"

	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/decode"
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
	// put user00042 hello world
	// delete gone
}

// The first VersionEdit of a new leveldb MANIFEST, then one that adds a
// table to level 0, and the live state they leave.
func ExampleManifest() {
	first := []byte{1, 26}
	first = append(first, "leveldb.BytewiseComparator"...)
	first = append(first, 2, 3, 3, 5, 4, 0)
	flush := []byte{7, 0, 6, 100, 9, 'a', 1, 1, 0, 0, 0, 0, 0, 0, 9, 'z', 0, 1, 0, 0, 0, 0, 0, 0, 4, 2}
	m := dbdecode.NewManifest(0)
	w := decode.NewWriter(nil, decode.Output{}, 0)
	for i, r := range [][]byte{first, flush} {
		rec := &decode.Record{N: int64(i), Payload: r}
		if err := m.Decode(w, rec); err != nil {
			panic(err)
		}
		if err := m.Learn(rec); err != nil {
			panic(err)
		}
	}
	if err := m.Summary(w); err != nil {
		panic(err)
	}
	fmt.Printf("%s", w.B)
	// Output:
	// comparator leveldb.BytewiseComparator
	// log-number 000003
	// next-file 000005
	// last-seq 0
	// add-file L0 000006 size=100 smallest=a#1,SET largest=z#1,DEL
	// last-seq 2
	// live edits=2
	// live comparator=leveldb.BytewiseComparator
	// live log-number=000003
	// live next-file=000005
	// live last-seq=2
	// live L0 files=1 size=100
	// live L0 000006 size=100 smallest=a#1,SET largest=z#1,DEL
}

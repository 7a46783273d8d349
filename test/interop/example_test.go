package interop

import (
	"bytes"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/syndtr/goleveldb/leveldb/journal"
)

// Example writes a log with recfs's LogWriter and reads it back with
// goleveldb's journal.Reader, the round trip these tests run at scale.
func Example() {
	var log bytes.Buffer
	w := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for _, r := range []string{"alpha", "", "gamma"} {
		if _, err := w.WriteRecord([]byte(r)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	r := journal.NewReader(&log, nil, true, true)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(rec)
		fmt.Printf("%q\n", b)
	}
	// Output:
	// "alpha"
	// ""
	// "gamma"
}

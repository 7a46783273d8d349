package index_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/index"
)

func ExampleBuild() {
	var log bytes.Buffer
	w := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for _, r := range []string{"alpha", "", "gamma ray"} {
		w.WriteRecord([]byte(r))
	}
	w.Close()

	t, err := index.Build(context.Background(), bytes.NewReader(log.Bytes()), int64(log.Len()), index.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Format(), t.Len(), "records")
	p := make([]byte, 3)
	t.ReadAt(2, p, 6) // bytes [6, 9) of record 2
	fmt.Printf("record 2 is %d bytes, ends with %q\n", t.Size(2), p)
	// Output:
	// leveldb 3 records
	// record 2 is 9 bytes, ends with "ray"
}

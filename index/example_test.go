package index_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/recfs/recfs/codec"
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

func ExampleTable_AppendStream() {
	dir, err := os.MkdirTemp("", "recfs-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	t, err := index.Create(ctx, filepath.Join(dir, "events.log"), codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		panic(err)
	}
	defer t.Close()
	// Each line becomes one record, framed as it is read.
	first, n, err := t.AppendStream(ctx, index.LineRecords(strings.NewReader("alpha\nbeta\r\ngamma")), index.AppendOptions{Sync: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("appended %d records from %d; record 1 is %d bytes\n", n, first, t.Size(1))
	// Output:
	// appended 3 records from 0; record 1 is 4 bytes
}

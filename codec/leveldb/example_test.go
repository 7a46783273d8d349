package leveldb_test

import (
	"bytes"
	"fmt"

	"github.com/recfs/recfs/codec/leveldb"
)

func ExampleNewWriter() {
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for _, rec := range []string{"abc", "", "hello, world"} {
		off, err := w.WriteRecord([]byte(rec))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q at offset %d\n", rec, off)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes; first chunk: % x\n", buf.Len(), buf.Bytes()[:10])
	// Output:
	// "abc" at offset 0
	// "" at offset 10
	// "hello, world" at offset 17
	// 36 bytes; first chunk: f2 70 e8 9d 03 00 01 61 62 63
}

func ExampleNewScanner() {
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	_, _ = w.WriteRecord([]byte("first"))
	_, _ = w.WriteRecord(bytes.Repeat([]byte("x"), 40000)) // spans two blocks
	_, _ = w.WriteRecord([]byte("last"))
	_ = w.Close()
	data := buf.Bytes()
	data[35000] ^= 0xff // damage the second block

	r := bytes.NewReader(data)
	s := leveldb.NewScanner(r, int64(len(data)), leveldb.Options{})
	for s.Next() {
		rec := s.Record()
		p := make([]byte, rec.Len)
		if _, err := leveldb.ReadRecord(r, rec, p, 0, leveldb.Options{}); err != nil {
			panic(err)
		}
		fmt.Printf("record at %d: %d bytes %q\n", rec.Off, rec.Len, p[:min(len(p), 5)])
	}
	for _, d := range s.Damage() {
		fmt.Println("damage:", d)
	}
	fmt.Println("error:", s.Err())
	// Output:
	// record at 0: 5 bytes "first"
	// damage: record cut short: 32756 bytes at offset 12
	// damage: checksum mismatch: 7269 bytes at offset 32768
	// error: <nil>
}

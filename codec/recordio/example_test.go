package recordio_test

import (
	"bytes"
	"fmt"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/recordio"
)

// Write a small recordio file with a header entry and a trailer, then scan
// it and read every item back.
func ExampleNewScanner() {
	var file bytes.Buffer
	w, _ := recordio.NewWriter(&file, recordio.WriterOptions{
		Header:  []recordio.HeaderEntry{{Key: "app", Value: "demo"}},
		Trailer: true,
	})
	for _, s := range []string{"alpha", "", "gamma"} {
		w.Append([]byte(s))
	}
	w.SetTrailer([]byte("index"))
	w.Close()

	r := bytes.NewReader(file.Bytes())
	s, err := recordio.NewScanner(r, int64(file.Len()), codec.Unknown, recordio.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rd, _ := recordio.NewReader(r, int64(file.Len()), s.Format(), s.Transformers(), recordio.Options{}, 4)
	fmt.Println(s.Format(), file.Len(), s.Header())
	for s.Next() {
		loc := s.Item()
		buf := make([]byte, loc.Len)
		rd.ReadItem(loc, buf, 0)
		fmt.Printf("block %d item %d: %q\n", loc.Block, loc.Item, buf)
	}
	tl, ok, _ := s.Trailer()
	buf := make([]byte, tl.Len)
	rd.ReadItem(tl, buf, 0)
	fmt.Printf("trailer %v at %d: %q\n", ok, tl.Block, buf)
	// Output:
	// recordio 98304 [{trailer true} {app demo}]
	// block 32768 item 0: "alpha"
	// block 32768 item 1: ""
	// block 32768 item 2: "gamma"
	// trailer true at 65536: "index"
}

// Compressed blocks: the writer applies the transformer chain, the scanner
// undoes it.
func ExampleNewWriter() {
	var file bytes.Buffer
	w, err := recordio.NewWriter(&file, recordio.WriterOptions{Transformers: []string{"zstd"}, MaxItems: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 5; i++ {
		w.Append(bytes.Repeat([]byte{'a' + byte(i)}, 1000))
	}
	w.Close()
	s, _ := recordio.NewScanner(bytes.NewReader(file.Bytes()), int64(file.Len()), codec.RecordIO, recordio.Options{})
	for s.Next() {
		b := s.Block()
		fmt.Println(s.Item().Block, s.Item().Item, s.Item().Len, b.Transformed, b.RawLen)
	}
	fmt.Println(s.Transformers(), s.Blocks())
	// Output:
	// 32768 0 1000 true 2005
	// 32768 1 1000 true 2005
	// 65536 0 1000 true 2005
	// 65536 1 1000 true 2005
	// 98304 0 1000 true 1003
	// [zstd] 3
}

// Damage is skipped and reported; the items of intact blocks survive.
func ExampleScanner_Damage() {
	var file bytes.Buffer
	w, _ := recordio.NewWriter(&file, recordio.WriterOptions{MaxItems: 0})
	for _, s := range []string{"one", "two", "three"} {
		w.Append([]byte(s))
		w.Flush() // one item per block
	}
	w.Close()
	data := file.Bytes()
	data[2*32768+30] ^= 0xff // flip a payload byte of the second body block
	s, _ := recordio.NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, recordio.Options{})
	for s.Next() {
		fmt.Println("item at", s.Item().Block)
	}
	for _, d := range s.Damage() {
		fmt.Println(d.Off, d.Len, d.Err)
	}
	// Output:
	// item at 32768
	// item at 98304
	// 65536 32768 codec: corrupt data
}

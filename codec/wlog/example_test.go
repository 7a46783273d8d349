package wlog_test

import (
	"bytes"
	"fmt"

	"github.com/recfs/recfs/codec/wlog"
)

// Scan a segment and read its records back, decompressed.
func Example() {
	var seg bytes.Buffer
	w := wlog.NewWriter(&seg, wlog.WriterOptions{Compression: wlog.Snappy})
	w.WriteRecord([]byte("series 1"))
	w.WriteRecord(bytes.Repeat([]byte("sample "), 10000))
	w.Close()

	r := bytes.NewReader(seg.Bytes())
	sc := wlog.NewScanner(r, int64(seg.Len()), wlog.Options{})
	for sc.Next() {
		rec := sc.Record()
		p, err := wlog.Decode(r, rec, nil, wlog.Options{})
		if err != nil {
			panic(err)
		}
		fmt.Printf("at %d: %d bytes stored (%v), %d bytes: %.8q\n", rec.Off, rec.Len, rec.Comp, len(p), p)
	}
	fmt.Println(sc.Err(), len(sc.Damage()))
	// Output:
	// at 0: 8 bytes stored (none), 8 bytes: "series 1"
	// at 15: 3512 bytes stored (snappy), 70000 bytes: "sample s"
	// <nil> 0
}

// A torn last page, as a crash leaves it, is damage of the truncation kind.
func ExampleScanner_Damage() {
	var seg bytes.Buffer
	w := wlog.NewWriter(&seg, wlog.WriterOptions{})
	w.WriteRecord([]byte("kept"))
	w.WriteRecord(bytes.Repeat([]byte{1}, 50000))
	w.Close()
	torn := seg.Bytes()[:40000]

	sc := wlog.NewScanner(bytes.NewReader(torn), int64(len(torn)), wlog.Options{})
	for sc.Next() {
		fmt.Println("record at", sc.Record().Off)
	}
	for _, d := range sc.Damage() {
		fmt.Println(d.Error())
	}
	// Output:
	// record at 0
	// record cut short: 32757 bytes at offset 11
	// truncated chunk: 7232 bytes at offset 32768
}

package etcdwal_test

import (
	"bytes"
	"fmt"

	"github.com/recfs/recfs/codec/etcdwal"
)

// Scan a (preallocated) WAL file and read its records back.
func Example() {
	var file bytes.Buffer
	w := etcdwal.NewWriter(&file, etcdwal.WriterOptions{})
	w.WriteRecord(etcdwal.CrcType, nil)
	w.WriteRecord(etcdwal.MetadataType, []byte{8, 1, 16, 2})
	w.WriteRecord(etcdwal.EntryType, []byte("an entry"))
	w.Close()
	file.Write(make([]byte, 4096)) // preallocated space

	r := bytes.NewReader(file.Bytes())
	sc := etcdwal.NewScanner(r, int64(file.Len()), etcdwal.Options{})
	for sc.Next() {
		rec := sc.Record()
		p, _ := etcdwal.Read(r, rec, nil)
		w, _ := etcdwal.ParseRecord(p)
		fmt.Printf("at %d: %s, %d bytes, crc %08x, data %q\n", rec.Off, etcdwal.TypeName(rec.Type), rec.Len, w.CRC, w.Data)
	}
	fmt.Println(sc.Err(), len(sc.Damage()), "log ends at", sc.Info().LastEnd)
	// Output:
	// at 0: crc, 4 bytes, crc 00000000, data ""
	// at 16: metadata, 14 bytes, crc c59c3b29, data "\b\x01\x10\x02"
	// at 40: entry, 18 bytes, crc 16fc44ac, data "an entry"
	// <nil> 0 log ends at 72
}

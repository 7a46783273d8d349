package recordio

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestRecordIOPlainBlockPastCap: an untransformed block larger than
// MaxBlockSize (grailbio's default 16385 items of 64 KiB make a 1 GiB block)
// is read normally — the cap guards decompression only.
func TestRecordIOPlainBlockPastCap(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var items [][]byte
	for i := range 40 {
		it := bytes.Repeat([]byte{byte(i)}, 65536)
		items = append(items, it)
		w.Append(it)
	}
	w.Close()
	o := Options{MaxBlockSize: 1 << 20} // the block holds 2.5 MiB
	data := buf.Bytes()
	s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, o)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, nil, o, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for s.Next() {
		loc := s.Item()
		p := make([]byte, loc.Len)
		if _, err := rd.ReadItem(loc, p, 0); err != nil || !bytes.Equal(p, items[n]) {
			t.Fatalf("item %d: %v", n, err)
		}
		n++
	}
	if n != len(items) || len(s.Damage()) != 0 || s.Err() != nil {
		t.Fatalf("%d items, damage %v, err %v", n, s.Damage(), s.Err())
	}
}

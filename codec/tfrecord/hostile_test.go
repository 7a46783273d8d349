package tfrecord

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// headerRun returns a file of one bad byte followed by k valid headers,
// 12 bytes apart, each claiming the rest of the file as its data, none
// with a valid data checksum: every one is a resync candidate whose
// check reads to the end of the file.
func headerRun(k, tail int) []byte {
	size := 1 + HeaderSize*k + tail
	b := make([]byte, size)
	b[0] = 0xff
	for i := range k {
		off := 1 + HeaderSize*i
		var h [HeaderSize]byte
		PutHeader(&h, uint64(size-off-Overhead))
		copy(b[off:], h[:])
	}
	return b
}

// TestResyncLinear: a hostile file of many valid-looking headers costs a
// scan reads linear in the file's size, not one pass per header.
func TestResyncLinear(t *testing.T) {
	t.Parallel()
	const k = 8192
	file := headerRun(k, 64<<10)
	size := int64(len(file))
	// Four passes of the file plus the resync allowance, with slack.
	limit := 8*size + 32<<20
	cr := &codectest.ReadLimit{R: bytes.NewReader(file), Limit: limit}
	recs, dmg, err := scanCount(cr, size, Options{Window: 64})
	if err != nil {
		t.Fatalf("scan of %d bytes read more than %d bytes (quadratic resync): %v", size, limit, err)
	}
	if recs != 0 || len(dmg) != 1 || dmg[0].Off != 0 || dmg[0].Len != size {
		t.Errorf("records %d, damage %+v; want none and one range over the whole file", recs, dmg)
	}
	t.Logf("%d bytes, %d read", size, cr.Read)
}

func scanCount(r io.ReaderAt, size int64, o Options) (int, []codec.Damage, error) {
	s := NewScanner(r, size, o)
	n := 0
	for s.Next() {
		n++
	}
	return n, s.Damage(), s.Err()
}

// TestResyncLinearCompressed: the same file gzipped costs the indexing
// pass, whose resync reads go through checkpoints, a bounded number of
// passes of the compressed file.
func TestResyncLinearCompressed(t *testing.T) {
	t.Parallel()
	file := headerRun(8192, 2<<20) // longer than a scan window
	z := codectest.Gzip(file)
	size := int64(len(file))
	limit := 16*int64(len(z)) + 32<<20
	cr := &codectest.ReadLimit{R: bytes.NewReader(z), Limit: limit}
	recs := 0
	res, err := IndexCompressed(context.Background(), cr, int64(len(z)), Gzip, IndexOptions{}, func(Record) bool { recs++; return true })
	if err != nil {
		t.Fatalf("index of %d bytes (%d compressed) read more than %d compressed bytes: %v", size, len(z), limit, err)
	}
	if recs != 0 || len(res.Damage) != 1 || res.Damage[0].Len != size {
		t.Errorf("records %d, damage %+v; want none and one range over the whole stream", recs, res.Damage)
	}
	t.Logf("%d bytes (%d compressed), %d compressed bytes read", size, len(z), cr.Read)
}

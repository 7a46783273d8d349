package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/tfrecord"
)

// TestTFRecordCompressedRecordBomb: a small gzipped TFRecord file of
// millions of empty records (16 identical bytes each, which deflate
// squeezes about a thousandfold) would make a record table of hundreds of
// times the file's size; its build fails with codec.ErrLimit instead,
// while a compressed file within the bound still opens.
func TestTFRecordCompressedRecordBomb(t *testing.T) {
	empty := tfrecord.AppendRecord(nil, nil)
	gzipped := func(n int) []byte {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		block := bytes.Repeat(empty, 4096)
		for i := 0; i < n; i += 4096 {
			zw.Write(block[:min(4096, n-i)*len(empty)])
		}
		zw.Close()
		return z.Bytes()
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		n    int
		fail bool
	}{{n: 1 << 16}, {n: 3 << 20, fail: true}} {
		z := gzipped(tc.n)
		path := filepath.Join(dir, "bomb.tfrecord.gz")
		if err := os.WriteFile(path, z, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
		if !tc.fail {
			if err != nil || tb.Len() != int64(tc.n) {
				t.Fatalf("%d records in %d gzipped bytes: %v", tc.n, len(z), err)
			}
			tb.Close()
			continue
		}
		if err == nil {
			n := tb.Len()
			tb.Close()
			t.Fatalf("%d gzipped bytes made a table of %d records (%d bytes of table)", len(z), n, n*12)
		}
		if !errors.Is(err, codec.ErrLimit) {
			t.Fatalf("%d records in %d gzipped bytes: %v, want codec.ErrLimit", tc.n, len(z), err)
		}
	}
}

package index

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// benchRecords returns n records of 99 bytes.
func benchRecords(n int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "%08d%091d", i, 0)
	}
	return recs
}

// BenchmarkAppendBatch appends 100k records of 99 bytes in one synced
// Append to a new file of each writable format (what `recfs append
// --lines --sync` does after reading its input).
func BenchmarkAppendBatch(b *testing.B) {
	recs := benchRecords(100_000)
	for _, c := range []struct {
		f       codec.Format
		trailer bool
	}{{codec.LevelDB, false}, {codec.TFRecord, false}, {codec.RecordIO, false}, {codec.RecordIO, true}} {
		b.Run(fmt.Sprintf("%v-trailer=%v", c.f, c.trailer), func(b *testing.B) {
			b.SetBytes(int64(len(recs) * 99))
			dir := b.TempDir()
			for i := 0; b.Loop(); i++ {
				tb, err := Create(context.Background(), filepath.Join(dir, fmt.Sprint(i)), c.f, c.trailer, Options{CacheDir: "-", Writable: true})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tb.Append(context.Background(), recs, AppendOptions{Sync: true}); err != nil {
					b.Fatal(err)
				}
				tb.Close()
			}
		})
	}
}

// BenchmarkAppendOne appends records of 99 bytes one Append each, unsynced,
// to a log that grows (what each close in a --rw mount does).
func BenchmarkAppendOne(b *testing.B) {
	rec := benchRecords(1)
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord} {
		b.Run(f.String(), func(b *testing.B) {
			b.SetBytes(99)
			tb, err := Create(context.Background(), filepath.Join(b.TempDir(), "f"), f, false, Options{CacheDir: b.TempDir(), Writable: true})
			if err != nil {
				b.Fatal(err)
			}
			defer tb.Close()
			for b.Loop() {
				if _, err := tb.Append(context.Background(), rec, AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendStream appends 100k lines of 99 bytes read from a reader
// in one synced AppendStream to a new file of each writable format (what
// `recfs append --lines --sync` does, without the process).
func BenchmarkAppendStream(b *testing.B) {
	var in bytes.Buffer
	for _, r := range benchRecords(100_000) {
		in.Write(r)
		in.WriteByte('\n')
	}
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord, codec.RecordIO} {
		b.Run(f.String(), func(b *testing.B) {
			b.SetBytes(int64(in.Len()))
			dir := b.TempDir()
			for i := 0; b.Loop(); i++ {
				tb, err := Create(context.Background(), filepath.Join(dir, fmt.Sprint(i)), f, false, Options{CacheDir: "-", Writable: true})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := tb.AppendStream(context.Background(), LineRecords(bytes.NewReader(in.Bytes())), AppendOptions{Sync: true}); err != nil {
					b.Fatal(err)
				}
				tb.Close()
			}
		})
	}
}

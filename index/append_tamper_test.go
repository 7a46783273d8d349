package index

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
)

// TestAppendAfterRewriteInPlace: another writer rewrites the file in place
// between two appends — same size, same head, mtime put back, so only the
// ctime moves. The append must not extend the old version's table: a read
// of the old generation either fails or returns that generation's bytes,
// never the rewrite's.
func TestAppendAfterRewriteInPlace(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("h"), 3*identBlock)
	for _, tc := range []struct {
		name string
		f    codec.Format
		c, d int // lengths of the rewrite's two small records (100+100 before)
	}{
		{"leveldb-other-lengths", codec.LevelDB, 50, 150},
		{"tfrecord-other-lengths", codec.TFRecord, 50, 150},
		{"leveldb-same-lengths", codec.LevelDB, 100, 100},
		{"tfrecord-same-lengths", codec.TFRecord, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			write := func(recs ...[]byte) (*Table, string) {
				tb, path := createTable(t, tc.f, false)
				for _, r := range recs {
					if _, err := tb.Append(ctx, [][]byte{r}, AppendOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				return tb, path
			}
			tb, path := write(big, bytes.Repeat([]byte("a"), 100), bytes.Repeat([]byte("b"), 100))
			_, path2 := write(big, bytes.Repeat([]byte("c"), tc.c), bytes.Repeat([]byte("d"), tc.d))
			v1, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			v2, err := os.ReadFile(path2)
			if err != nil {
				t.Fatal(err)
			}
			if len(v1) != len(v2) {
				t.Fatalf("the two versions differ in size: %d, %d", len(v1), len(v2))
			}
			gen := tb.Generation()
			want := make([]byte, tb.Size(1))
			if _, err := tb.ReadAt(1, want, 0); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond) // a ctime the rewrite moves
			i := 0
			for v1[i] == v2[i] {
				i++
			}
			fh, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.WriteAt(v2[i:], int64(i)); err != nil {
				t.Fatal(err)
			}
			if err := fh.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Append(ctx, [][]byte{[]byte("new")}, AppendOptions{}); err != nil {
				t.Fatalf("append after the rewrite: %v", err)
			}
			got := make([]byte, len(want))
			n, err := tb.ReadAtGeneration(gen, 1, got, 0)
			if err == nil && !bytes.Equal(got[:n], want[:n]) {
				t.Errorf("record 1 of generation %d read %q, was %q: bytes of another version", gen, got[:min(n, 8)], want[:8])
			}
			if tb.Generation() == gen {
				t.Errorf("generation %d kept across a rewrite", gen)
			}
			if n := tb.Len(); n != 4 {
				t.Errorf("%d records after the append, want 4", n)
			}
		})
	}
}

package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/recordio"

	"github.com/recfs/recfs/codec"
)

// TestAppendFrom: records appended from streams read back in both writable
// formats, and an input that ends early leaves the file byte-identical.
func TestAppendFrom(t *testing.T) {
	ctx := context.Background()
	for _, f := range []codec.Format{codec.LevelDB, codec.RecordIO} {
		t.Run(f.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a")
			tb, err := Create(ctx, path, f, f == codec.RecordIO, Options{CacheDir: "-", Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			recs := [][]byte{[]byte("one"), bytes.Repeat([]byte("big"), 50000), {}}
			var srcs []recordio.ItemSource
			for _, r := range recs {
				srcs = append(srcs, recordio.ItemSource{R: bytes.NewReader(r), Size: int64(len(r))})
			}
			first, err := tb.AppendFrom(ctx, srcs, AppendOptions{Sync: true})
			if err != nil || first != 0 || tb.Len() != 3 {
				t.Fatalf("AppendFrom: first %d, %d records, %v", first, tb.Len(), err)
			}
			for i, r := range recs {
				if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, r) {
					t.Fatalf("record %d differs", i)
				}
			}
			before, _ := os.ReadFile(path)
			_, err = tb.AppendFrom(ctx, []recordio.ItemSource{
				{R: bytes.NewReader([]byte("fine")), Size: 4},
				{R: bytes.NewReader(make([]byte, 90000)), Size: 90001},
			}, AppendOptions{})
			if !errors.Is(err, codec.ErrShortInput) {
				t.Fatalf("short input: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != 3 {
				t.Fatalf("failed append changed the file (%d -> %d bytes, %d records)", len(before), len(after), tb.Len())
			}
		})
	}
}

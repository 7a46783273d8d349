package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// walVector returns the bytes of a pebble WAL vector and the offset of its
// end-of-log marker.
func walVector(t *testing.T, name string) ([]byte, int64) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(vectorDir, "leveldb", name))
	if err != nil {
		t.Fatal(err)
	}
	sc := leveldb.NewScanner(bytes.NewReader(src), int64(len(src)), leveldb.Options{})
	for sc.Next() {
	}
	if sc.Info().EOFMarker < 0 {
		t.Fatalf("%s has no end marker", name)
	}
	return src, sc.Info().EOFMarker
}

// TestAppendClosedWALRefused: pebble closed the log (end-of-log marker);
// records after the marker would be read by nobody, so the append is
// refused with leveldb.ErrClosedLog and the file is left byte-identical.
func TestAppendClosedWALRefused(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"pebble-recyclable.log", "pebble-walsync.log", "pebble-recyclable-eof-next-block.log"} {
		t.Run(name, func(t *testing.T) {
			src, _ := walVector(t, name)
			tb, path := openNamed(t, "000007.log", src, Options{CacheDir: "-", Writable: true})
			n := tb.Len()
			for range 2 { // a retry must not change anything either
				_, err := tb.Append(ctx, [][]byte{[]byte("late")}, AppendOptions{Sync: true})
				if !errors.Is(err, leveldb.ErrClosedLog) {
					t.Fatalf("append to a closed WAL: %v", err)
				}
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(src, after) || tb.Len() != n {
				t.Fatalf("refused append changed the file (%d -> %d bytes) or table (%d -> %d)", len(src), len(after), n, tb.Len())
			}
		})
	}
}

// TestAppendOpenWALKeepsFlavour: a pebble WAL that was not closed (the
// vector without its marker) is continued with chunks of its own flavour
// and log number: the file equals what one writer session would write.
func TestAppendOpenWALKeepsFlavour(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		o    leveldb.WriterOptions
	}{
		{"pebble-recyclable.log", leveldb.WriterOptions{Recyclable: true, LogNum: 7}},
		{"pebble-walsync.log", leveldb.WriterOptions{WALSync: true, LogNum: 7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, marker := walVector(t, c.name)
			tb, path := openNamed(t, "000007.log", src[:marker], Options{CacheDir: "-", Writable: true})
			n := tb.Len()
			more := [][]byte{[]byte("x"), {}, bytes.Repeat([]byte("y"), 70000)}
			if _, err := tb.Append(ctx, more, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			want.Write(src[:marker])
			o := c.o
			o.Offset = marker
			w := leveldb.NewWriter(&want, o)
			for _, r := range more {
				w.WriteRecord(r)
			}
			w.Close()
			got, _ := os.ReadFile(path)
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("appended file (%d bytes) differs from a %+v session (%d bytes)", len(got), c.o, want.Len())
			}
			if tb.Len() != n+3 || !bytes.Equal(readRecord(t, tb, n+2), more[2]) {
				t.Fatalf("table after append: %d records", tb.Len())
			}
		})
	}
}

package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
)

// TestAppendTableFromWriter: after an append, the table the writer
// extended (from the offsets and lengths it framed records at, without
// reading them back) is the table a scan of the file builds: same records,
// offsets, sizes, flavour and format facts, for TFRecord and every leveldb
// flavour, a
// padded App Engine file, records that span blocks and a block tail too
// short for a header.
func TestAppendTableFromWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	padded := func() []byte {
		var b bytes.Buffer
		w := leveldb.NewWriter(&b, leveldb.WriterOptions{AppEngine: true})
		w.WriteRecord([]byte("first"))
		w.Close()
		return b.Bytes()
	}
	wal := func(name string) []byte {
		src, marker := walVector(t, name)
		return src[:marker]
	}
	for _, c := range []struct {
		name   string
		file   func() []byte // nil: created empty
		format codec.Format  // of a created file
	}{
		{"created", nil, codec.LevelDB},
		{"created-tfrecord", nil, codec.TFRecord},
		{"appengine-padded", padded, 0},
		{"pebble-recyclable", func() []byte { return wal("pebble-recyclable.log") }, 0},
		{"pebble-walsync", func() []byte { return wal("pebble-walsync.log") }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "000007.log")
			o := Options{CacheDir: "-", Writable: true}
			var tb *Table
			var err error
			if c.file == nil {
				tb, err = Create(ctx, path, c.format, false, o)
			} else {
				if err := os.WriteFile(path, c.file(), 0o644); err != nil {
					t.Fatal(err)
				}
				tb, err = Open(ctx, path, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			// Lines that fill a block to within fewer bytes than a header,
			// then records spanning blocks, an empty one, and a batch.
			lines := strings.Repeat("x", 32768-7-7-3) + "\n\n" + strings.Repeat("y", 70000) + "\nz\n"
			if _, n, err := tb.AppendStream(ctx, LineRecords(strings.NewReader(lines)), AppendOptions{}); err != nil || n != 4 {
				t.Fatalf("AppendStream: %d records, %v", n, err)
			}
			checkTableIsScan(t, tb, path)
			if _, err := tb.Append(ctx, [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("b"), 100000)}, AppendOptions{Sync: true}); err != nil {
				t.Fatal(err)
			}
			checkTableIsScan(t, tb, path)
			// A stream of more records than a column chunk holds.
			if _, n, err := tb.AppendStream(ctx, LineRecords(strings.NewReader(strings.Repeat("r\n", chunkLen+5))), AppendOptions{}); err != nil || n != chunkLen+5 {
				t.Fatalf("AppendStream: %d records, %v", n, err)
			}
			checkTableIsScan(t, tb, path)
		})
	}
}

// checkTableIsScan fails t unless tb describes the file at path as a
// fresh scan of it does.
func checkTableIsScan(t *testing.T, tb *Table, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Build(context.Background(), bytes.NewReader(b), int64(len(b)), Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	got, want := tb.s(), fresh.s()
	if got.n != want.n || got.bytes != want.bytes || got.size != want.size || got.flavor != want.flavor ||
		got.format != want.format || len(got.damage) != len(want.damage) {
		t.Fatalf("table after append: %d records, %d bytes, size %d, %q %v, %d damage; a scan: %d, %d, %d, %q %v, %d",
			got.n, got.bytes, got.size, got.flavor, got.format, len(got.damage),
			want.n, want.bytes, want.size, want.flavor, want.format, len(want.damage))
	}
	for i := range want.n {
		if tb.Offset(i) != fresh.Offset(i) || tb.Size(i) != fresh.Size(i) {
			t.Fatalf("record %d: offset %d size %d; a scan: %d, %d", i, tb.Offset(i), tb.Size(i), fresh.Offset(i), fresh.Size(i))
		}
	}
	// The identity the append computed (from the bytes it kept, not read
	// back) is the one the file has: the next refresh finds it unchanged.
	if id, err := identify(got.src); err != nil || id != got.id {
		t.Fatalf("identity after append %+v; the file's %+v (%v)", got.id, id, err)
	}
	if gt, ok := got.tab.(*tfrTable); ok {
		wt := want.tab.(*tfrTable)
		if gt.resume != wt.resume || len(gt.side) != len(wt.side) {
			t.Fatalf("TFRecord table after append: resume %d, side %d; a scan: %d, %d", gt.resume, len(gt.side), wt.resume, len(wt.side))
		}
		return
	}
	gl, wl := got.tab.(*logTable), want.tab.(*logTable)
	if gl.info != wl.info || gl.resume != wl.resume || gl.hdr != wl.hdr || len(gl.side) != len(wl.side) {
		t.Fatalf("log table after append: %+v resume %d hdr %d side %d; a scan: %+v resume %d hdr %d side %d",
			gl.info, gl.resume, gl.hdr, len(gl.side), wl.info, wl.resume, wl.hdr, len(wl.side))
	}
}

// TestAppendReadsOneBlock: an append reads back at most one identity
// block of the file (the head the old table covered, to see that it
// still starts as it did), not the tail too: the identity's tail checksum
// comes from the bytes the previous append kept and this one wrote. It
// counts the bytes the process reads (rchar of /proc/self/io), so it runs
// alone (not in parallel).
func TestAppendReadsOneBlock(t *testing.T) {
	ctx := context.Background()
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord} {
		t.Run(f.String(), func(t *testing.T) {
			tb, path := createTable(t, f, false)
			// Past two identity blocks, so the head and tail are apart.
			if _, err := tb.Append(ctx, [][]byte{bytes.Repeat([]byte("h"), 3*identBlock)}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			const appends = 50
			before := readChars(t)
			for i := range appends {
				if _, err := tb.Append(ctx, [][]byte{bytes.Repeat([]byte{'a' + byte(i%26)}, 99)}, AppendOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			read := readChars(t) - before
			if per := read / appends; per > identBlock+identBlock/4 {
				t.Errorf("%d bytes read per append of 99 bytes, want at most %d (one identity block and change)", per, identBlock+identBlock/4)
			}
			checkTableIsScan(t, tb, path)
		})
	}
}

// readChars returns the bytes this process has read so far (rchar).
func readChars(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

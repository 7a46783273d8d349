package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/etcdwal"
)

// etcdFile frames n entries after a crc, metadata and snapshot record, and
// preallocates prealloc zero bytes after them; it returns the file and the
// records' payloads.
func etcdFile(t testing.TB, n, prealloc int) ([]byte, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w := etcdwal.NewWriter(&buf, etcdwal.WriterOptions{Seed: 42})
	var want [][]byte
	add := func(typ int64, data []byte) {
		off, err := w.WriteRecord(typ, data)
		if err != nil {
			t.Fatal(err)
		}
		w.Flush()
		b := buf.Bytes()[off:]
		rec, _ := etcdwal.ParseRecord(b[8 : 8+len(etcdwal.AppendRecord(nil, etcdwal.WALRecord{Type: typ, CRC: w.CRC(), Data: data}))])
		want = append(want, etcdwal.AppendRecord(nil, rec))
	}
	add(etcdwal.CrcType, nil)
	add(etcdwal.MetadataType, []byte{8, 1})
	add(etcdwal.SnapshotType, []byte{})
	for i := range n {
		add(etcdwal.EntryType, []byte(fmt.Sprintf("entry %d %s", i, strings.Repeat("v", i%300))))
	}
	w.Close()
	return append(buf.Bytes(), make([]byte, prealloc)...), want
}

// TestEtcdOpenReadCache: a preallocated WAL file is detected, read back
// record by record (each a walpb.Record), saved and loaded from the cache;
// the zeros after the log are no damage.
func TestEtcdOpenReadCache(t *testing.T) {
	t.Parallel()
	file, want := etcdFile(t, 500, 1<<20)
	path := filepath.Join(t.TempDir(), "0000000000000000-0000000000000000.wal")
	recfile.WriteFile(t, path, file)
	cache := t.TempDir()
	checkBuiltThenCached(t, path, cache, codec.EtcdWAL, want, func(tb *Table) {
		if in := tb.Info(); !strings.Contains(in.Flavor, "500 entries") || !strings.Contains(in.Flavor, "preallocated") {
			t.Fatalf("flavor %q", in.Flavor)
		}
	})
}

// TestEtcdReadOnly: appends are refused naming etcd, and the file is left
// as it was.
func TestEtcdReadOnly(t *testing.T) {
	t.Parallel()
	file, _ := etcdFile(t, 3, 100)
	tb, path := openTemp(t, file, Options{CacheDir: "-", Writable: true})
	_, err := tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{})
	if !errors.Is(err, ErrReadOnlyFormat) || !strings.Contains(err.Error(), "etcd") {
		t.Fatalf("append: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, file) {
		t.Fatal("the file changed")
	}
}

// TestEtcdRewrittenInPlace: etcd writes new records into its preallocated
// space (the size stays); a refresh rebuilds the table and finds them.
func TestEtcdRewrittenInPlace(t *testing.T) {
	t.Parallel()
	full, want := etcdFile(t, 40, 0)
	// Before: the first 13 records, then zeros, in a file of the final
	// size plus preallocated space.
	sc := etcdwal.NewScanner(bytes.NewReader(full), int64(len(full)), etcdwal.Options{})
	var offs []int64
	for sc.Next() {
		offs = append(offs, sc.Record().Off)
	}
	early := make([]byte, len(full)+4096)
	copy(early, full[:offs[13]])
	// etcd writes the rest into place.
	tb, path := openTemp(t, early, Options{CacheDir: "-"})
	if tb.Len() != 13 {
		t.Fatalf("%d records before, want 13", tb.Len())
	}
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt(full, 0)
	f.Close()
	if _, err := tb.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != int64(len(want)) || len(tb.Damage()) > 0 {
		t.Fatalf("%d records after, want %d; damage %v", tb.Len(), len(want), tb.Damage())
	}
	if got := readRecord(t, tb, int64(len(want)-1)); !bytes.Equal(got, want[len(want)-1]) {
		t.Fatal("last record differs")
	}
}
